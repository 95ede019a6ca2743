import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import WebCache
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response on its way to the client.
package struct ProxyResponse: Sendable {
    package var head: HTTPResponse
    var body: ResponseBodyStream
    /// A stored body sent straight from its file (`sendfile`) instead of ``body``.
    var file: StoredBodyFile?
    /// For a fresh answer from the store: the engine's terms for sending it again.
    var repeatable: RepeatableAnswer?

    static func error(_ status: Int, _ message: String) -> ProxyResponse {
        var head = HTTPResponse(status: .init(code: status))
        head.headerFields[.contentType] = "text/plain; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        return ProxyResponse(head: head, body: ResponseBodyStream(Data((message + "\n").utf8)))
    }
}

/// A stored body to send from its file: an open handle, closed once written.
struct StoredBodyFile: Sendable {
    /// Bodies this large or larger are sent from their files; smaller ones are copied from
    /// memory, which costs less than opening a file.
    static let minimumSize = 64 << 10

    var handle: NIOFileHandle
    /// Bytes sent: from ``offset`` on (a range of the body for a 206).
    var size: Int
    var offset = 0
}

/// A whole answer as it goes on the wire: the head, with the body unless that goes from a file;
/// or, for a repeated answer, one file holding both.
struct EncodedAnswer: Sendable {
    var bytes: ByteBuffer
    var file: StoredBodyFile? = nil
    /// Head and body together; when set, ``bytes`` and ``file`` are not sent.
    var wireFile: WireFile? = nil
}

/// A reverse-mode request target: the URL it stands for, and the path (with query) sent upstream.
struct ReverseTarget: Sendable {
    var url: URL
    var path: String
}

/// Where a client request goes: answered by the proxy itself (metrics, refusals), or a cache
/// request.
package enum ProxyRouting: Sendable {
    case answered(ProxyResponse)
    case cache(HTTPRequest, url: URL, body: Data?)
}

extension CachingProxy {
    /// Turns a client request into a cache request, or answers it when it is for the proxy
    /// itself or cannot go anywhere.
    package func route(_ head: HTTPRequestHead, body: ByteBuffer, fromLoopback: Bool = true, tunnel: InterceptedTunnel? = nil) -> ProxyRouting {
        // Inside a tunnel the path is the origin's, never the proxy's own.
        if tunnel == nil, let metricsPath = configuration.metricsPath, head.method == .GET, head.uri == metricsPath {
            guard fromLoopback else { return .answered(.error(403, "the metrics are for clients on this machine")) }
            var response = HTTPResponse(status: .ok)
            response.headerFields[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            response.headerFields[.cacheControl] = "no-store"
            return .answered(ProxyResponse(head: response, body: ResponseBodyStream(Data(metrics.exposition(engine: cache.counters, unreachableOrigins: cache.unreachableOrigins.count)))))
        }
        guard let method = HTTPRequest.Method(head.method.token) else { return .answered(.error(400, "invalid method")) }
        let target: URL
        var request: HTTPRequest
        if let tunnel {
            guard let url = tunnel.url(for: head.uri) else {
                return .answered(.error(400, "cannot route \(head.uri) inside a tunnel to \(tunnel.authority)"))
            }
            guard destinationAllowed(host: tunnel.host) else { return .answered(.error(403, "\(tunnel.host) is not an allowed destination")) }
            target = url
            request = HTTPRequest(method: method, url: url)
        } else if let upstream = configuration.upstream {
            guard let reverse = reverseTarget(head.uri) else { return .answered(.error(400, "cannot route \(head.uri): invalid target")) }
            target = reverse.url
            request = HTTPRequest(method: method, scheme: upstream.scheme, authority: upstreamAuthority, path: reverse.path)
        } else {
            guard let forward = forwardTarget(head.uri) else {
                return .answered(.error(400, "cannot route \(head.uri): forward mode needs an absolute http URL"))
            }
            guard destinationAllowed(forward) else { return .answered(.error(403, "\(forward.host ?? "this host") is not an allowed destination")) }
            target = forward
            request = HTTPRequest(method: method, url: forward)
        }
        for header in head.headers {
            guard let name = HTTPField.Name(header.name), name.canonicalName != "host" else { continue }
            request.headerFields.append(HTTPField(name: name, value: header.value))
        }
        request.headerFields = MessageFields.removingHopByHop(request.headerFields)
        request.headerFields[.via] = appendingVia(request.headerFields[.via], version: head.version)
        return .cache(request, url: target, body: body.readableBytes > 0 ? Data(body.readableBytesView) : nil)
    }

    /// The cache's answer from its store alone, when it has one (see
    /// ``WebCache/HTTPCache/storedResponse(for:mode:)``): no task, no suspension.
    ///
    /// Stored bodies of ``StoredBodyFile/minimumSize`` bytes or more go from their files to the
    /// socket without being read into memory; when such a file cannot be opened (removed since),
    /// the answer is left to the engine, which reads the body and handles a broken entry.
    func storedResponse(for request: HTTPRequest, url: URL) -> ProxyResponse? {
        guard let response = cache.storedResponse(for: request, url: url, bodyFilesFrom: StoredBodyFile.minimumSize) else { return nil }
        var outgoing = outgoing(response.head, body: ResponseBodyStream(response.body))
        if let entry = response.bodyFile {
            guard var file = openBodyFile(of: entry) else { return nil }
            if let range = response.bodyRange {
                file.offset = range.lowerBound
                file.size = range.count
            }
            outgoing.file = file
        }
        outgoing.repeatable = response.repeatable
        return outgoing
    }

    /// The answer this proxy sent to the same request before, when the engine confirms it still
    /// stands (``RepeatedAnswers``), counted as sent; `nil` otherwise.
    func repeatedAnswer(to head: HTTPRequestHead, from answers: RepeatedAnswers) -> EncodedAnswer? {
        guard let answer = answers.answer(to: head) else { return nil }
        let encoded: EncodedAnswer
        switch answer.wire {
        case .buffer(let bytes):
            encoded = EncodedAnswer(bytes: bytes)
        case .headThenEntryFile(let responseHead):
            encoded = EncodedAnswer(bytes: responseHead, file: openBodyFile(of: answer.terms.entry))
            if encoded.file == nil {
                answers.forget(head)
                return nil
            }
        case .wholeFile(let file):
            encoded = EncodedAnswer(bytes: ByteBuffer(), wireFile: file)
        }
        guard cache.repeatAnswer(answer.terms) else {
            try? encoded.file?.handle.close()
            answers.forget(head)
            return nil
        }
        metrics.countResponse(status: answer.status)
        return encoded
    }

    /// Keeps an encoded fresh answer for the same request (see ``repeatedAnswer(to:)``). A body
    /// that goes from its file is copied, with the head, into a ``WireFile`` when the whole
    /// answer is small enough to keep (``RepeatedAnswers/largestWireFile``) and the platform has
    /// such files; otherwise its file is opened again for each repeat.
    func remember(_ encoded: EncodedAnswer, of response: ProxyResponse, for head: HTTPRequestHead, in answers: RepeatedAnswers) {
        guard let terms = response.repeatable, encoded.file?.offset ?? 0 == 0, answers.admits(head) else { return }
        let wire: RepeatedAnswer.Wire
        if let file = encoded.file {
            let whole = encoded.bytes.readableBytes + file.size <= RepeatedAnswers.largestWireFile
                ? WireFile.make(head: encoded.bytes, body: file.handle, bodySize: file.size, directory: wireFileDirectory) : nil
            wire = whole.map { .wholeFile($0) } ?? .headThenEntryFile(encoded.bytes)
        } else {
            wire = .buffer(encoded.bytes)
        }
        answers.remember(RepeatedAnswer(wire: wire, status: response.head.status.code, terms: terms), for: head)
    }

    /// `entry`'s body file opened for `sendfile`, if it is still whole.
    private func openBodyFile(of entry: CacheEntry) -> StoredBodyFile? {
        guard let descriptor = cache.store.openVerifiedBodyFile(entry) else { return nil }
        return StoredBodyFile(handle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor), size: entry.bodySize)
    }

    /// The cache's answer, from the store or the origin, or an error response that says what
    /// went wrong.
    func respond(to request: HTTPRequest, body: Data?, interim: InterimResponseHandler? = nil) async -> ProxyResponse {
        if let host = request.url?.host, let refusal = await resolvedRefusal(for: host) { return refusal }
        do {
            let response = try await cache.streamingResponse(for: request, body: body, interim: interim)
            return outgoing(response.head, body: response.body)
        } catch let error as CacheError {
            switch error.kind {
            case .offlineMiss: return .error(504, "the origin is unreachable: \(error.message)")
            case .invalidRequest: return .error(400, error.message)
            case .originFailed, .tooManyRedirects: return .error(502, error.message)
            }
        } catch {
            return .error(502, "\(error)")
        }
    }

    private func outgoing(_ head: HTTPResponse, body: ResponseBodyStream) -> ProxyResponse {
        var head = head
        head.headerFields[.via] = appendingVia(head.headerFields[.via], version: .http1_1)
        return ProxyResponse(head: head, body: body)
    }

    /// Forward mode: the absolute-form target, `http` only.
    private func forwardTarget(_ uri: String) -> URL? {
        guard let url = URL(string: uri), url.scheme?.lowercased() == "http", url.host != nil else { return nil }
        return url
    }

    /// A reverse-mode target: its URL and the path (with query) that goes upstream. Recent
    /// targets are kept, so that repeated requests skip parsing.
    func reverseTarget(_ uri: String) -> ReverseTarget? {
        guard let upstream = configuration.upstream else { return nil }
        if let known = reverseTargets.withLock({ $0[ExactText(uri)] }) { return known }
        var path = uri
        if !path.hasPrefix("/") {
            guard let components = URLComponents(string: path), components.scheme != nil else { return nil }
            path = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
                + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
        guard let url = URL(string: upstream.absoluteString.trimmingSuffix("/") + path) else { return nil }
        let target = ReverseTarget(url: url, path: path)
        reverseTargets.withLock { targets in
            if targets.count >= Self.reverseTargetsKept { targets.removeAll(keepingCapacity: true) }
            targets[ExactText(uri)] = target
        }
        return target
    }

    func destinationAllowed(_ url: URL) -> Bool {
        destinationAllowed(host: url.host ?? "")
    }

    /// Whether forward mode may go to `host`: any host on the allow-list when there is one;
    /// otherwise any host, except — when the proxy listens beyond loopback — this machine and
    /// private networks (so that an exposed proxy is no way into them).
    func destinationAllowed(host: String) -> Bool {
        guard !configuration.allowedDestinations.isEmpty else {
            return NetworkExposure.isLoopback(configuration.host) || !NetworkExposure.isInternal(host)
        }
        return configuration.allowedDestinations.contains { HostPattern($0).matches(host) }
    }

    func appendingVia(_ existing: String?, version: HTTPVersion) -> String {
        let entry = "\(version.major).\(version.minor) \(configuration.viaName)"
        return existing.map { "\($0), \(entry)" } ?? entry
    }

    /// Writes a response: a whole body in one trip to the event loop, a body still arriving
    /// chunk by chunk as it arrives (with the origin's `Content-Length`, or chunked). A body
    /// that fails half-way closes the connection, so the client sees it was cut short.
    func write(_ response: ProxyResponse, to channel: any Channel, persistence: ConnectionPersistence, method: NIOHTTP1.HTTPMethod) async {
        if response.body.completeBody != nil {
            channel.eventLoop.execute { [self] in
                send(encode(response, allocator: channel.allocator, persistence: persistence, method: method), to: channel, flush: true)
            }
            return
        }
        let framing = framing(of: response, method: method)
        metrics.countResponse(status: response.head.status.code)
        var head = ByteBuffer()
        head.writeResponseHead(response.head, framing: framing, persistence: persistence)
        do {
            try await channel.writeAndFlush(head)
            if case .none = framing {} else {
                for try await chunk in response.body where !chunk.isEmpty {
                    var buffer = ByteBuffer()
                    if framing == .chunked { buffer.writeChunk(chunk) } else { buffer.writeBytes(chunk) }
                    try await channel.writeAndFlush(buffer)
                }
                if framing == .chunked { try await channel.writeAndFlush(ByteBuffer.lastChunk) }
            }
        } catch {
            logger.debug("response cut short: \(error)")
            try? await channel.close()
        }
    }

    /// Encodes a response whose body is whole, and counts it as sent. A body file goes with it
    /// only when a body follows (not for HEAD or 304); otherwise it is closed here.
    func encode(
        _ response: ProxyResponse, allocator: ByteBufferAllocator, persistence: ConnectionPersistence, method: NIOHTTP1.HTTPMethod
    ) -> EncodedAnswer {
        let framing = framing(of: response, method: method)
        metrics.countResponse(status: response.head.status.code)
        let body = response.body.completeBody ?? Data()
        var file = response.file
        if case .length = framing {} else {
            try? file?.handle.close()
            file = nil
        }
        let inline = file == nil && framing != .none(contentLength: nil)
        var buffer = allocator.buffer(capacity: 512 + (inline ? body.count : 0))
        buffer.writeResponseHead(response.head, framing: framing, persistence: persistence)
        if inline, case .length = framing { buffer.writeBytes(body) }
        return EncodedAnswer(bytes: buffer, file: file)
    }

    /// Writes an encoded answer (and its body file), and flushes unless the caller flushes
    /// later; the future completes once it is written, the file closed.
    @discardableResult
    func send(_ answer: EncodedAnswer, to channel: any Channel, flush: Bool) -> EventLoopFuture<Void> {
        if let wireFile = answer.wireFile {
            let handle = wireFile.borrowHandle()
            let written = channel.write(IOData.fileRegion(FileRegion(fileHandle: handle, readerIndex: 0, endIndex: wireFile.size)))
            written.whenComplete { _ in wireFile.release(handle) }
            if flush { channel.flush() }
            return written
        }
        var written = channel.write(answer.bytes)
        if let file = answer.file {
            let region = FileRegion(fileHandle: file.handle, readerIndex: file.offset, endIndex: file.offset + file.size)
            written = channel.write(IOData.fileRegion(region))
            written.whenComplete { _ in try? file.handle.close() }
        }
        if flush { channel.flush() }
        return written
    }

    /// How the body of `response` goes on the wire: none where none may follow (HEAD, 1xx, 204,
    /// 304: the stored `Content-Length` is kept, except on 1xx and 204), the length of a whole
    /// body, the origin's `Content-Length` for a body still arriving, or chunked without one.
    private func framing(of response: ProxyResponse, method: NIOHTTP1.HTTPMethod) -> BodyFraming {
        let code = response.head.status.code
        guard method != .HEAD && code != 204 && code != 304 && code >= 200 else {
            if code < 200 || code == 204 { return .none(contentLength: nil) }
            return .none(contentLength: response.head.headerFields[.contentLength] ?? (code == 304 ? nil : "0"))
        }
        if let file = response.file { return .length(file.size) }
        if let complete = response.body.completeBody { return .length(complete.count) }
        if let declared = response.head.headerFields[.contentLength], let length = Int(declared), length >= 0 { return .length(length) }
        return .chunked
    }

    /// Where a `CONNECT` goes, if it may: forward mode only, `host:port`, an allowed destination.
    func tunnelDestination(for head: HTTPRequestHead) -> Result<TunnelDestination, ProxyRefusal> {
        guard configuration.upstream == nil else {
            return .failure(ProxyRefusal(response: .error(405, "CONNECT is only for forward mode")))
        }
        guard let colon = head.uri.lastIndex(of: ":"), let port = Int(head.uri[head.uri.index(after: colon)...]),
            (1...65535).contains(port)
        else {
            return .failure(ProxyRefusal(response: .error(400, "CONNECT needs host:port, not \(head.uri)")))
        }
        var host = String(head.uri[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, destinationAllowed(host: host) else {
            return .failure(ProxyRefusal(response: .error(403, "\(host) is not an allowed destination")))
        }
        return .success(TunnelDestination(host: host, port: port))
    }

    /// Connects to a tunnel's destination on the client connection's event loop. An exposed
    /// forward proxy resolves a destination name first, refuses it (``ProxyRefusal``, 403) when
    /// it resolves inside, and connects to the address it checked, so that a second lookup
    /// cannot answer differently.
    func connectTunnel(to destination: TunnelDestination, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        let timeout = TimeAmount.nanoseconds(configuration.connectTimeout.nanoseconds)
        let bootstrap: @Sendable () -> ClientBootstrap = { ClientBootstrap(group: eventLoop).connectTimeout(timeout).channelOption(.tcpOption(.tcp_nodelay), value: 1) }
        guard mustResolve(destination.host) else { return bootstrap().connect(host: destination.host, port: destination.port) }
        let checked = eventLoop.makePromise(of: [String].self)
        checked.completeWithTask { await self.destinations.resolve(destination.host) }
        return checked.futureResult.flatMap { addresses in
            if addresses.contains(where: NetworkExposure.isInternal) {
                let refusal = ProxyResponse.error(403, "\(destination.host) resolves to this machine or a private network, which this proxy does not serve")
                return eventLoop.makeFailedFuture(ProxyRefusal(response: refusal))
            }
            guard let first = addresses.first, let address = try? SocketAddress(ipAddress: first, port: destination.port) else {
                return bootstrap().connect(host: destination.host, port: destination.port)
            }
            return bootstrap().connect(to: address)
        }
    }
}

/// The destination of a `CONNECT` tunnel.
struct TunnelDestination: Sendable {
    var host: String
    var port: Int
}

/// A request the proxy answers itself with an error.
struct ProxyRefusal: Error {
    var response: ProxyResponse
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
