import HTTPCaching
import HTTPTypes
import HTTPWire
import NIOCore
import NIOHTTP1
import NIOPosix
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    func route(
        _ head: RequestHead, body: ByteBuffer, fromLoopback: Bool = true, tunnel: InterceptedTunnel? = nil
    ) -> ProxyRouting {
        let uri = head.uri
        // Inside a tunnel the path is the origin's, never the proxy's own.
        if tunnel == nil, let metricsPath = configuration.metricsPath, head.method == .GET, uri == metricsPath {
            guard fromLoopback else { return .answered(.error(403, "the metrics are for clients on this machine")) }
            var response = HTTPResponse(status: .ok)
            response.headerFields[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            response.headerFields[.cacheControl] = "no-store"
            return .answered(
                ProxyResponse(
                    head: response,
                    body: .whole(
                        Data(
                            metrics.exposition(
                                engine: cache.counters, unreachableOrigins: cache.unreachableOrigins.count)))))
        }
        guard let method = HTTPRequest.Method(head.methodName) else {
            return .answered(.error(400, "invalid method"))
        }
        let target: URL
        var request: HTTPRequest
        if let tunnel {
            guard let url = tunnel.url(for: uri) else {
                return .answered(.error(400, "cannot route \(uri) inside a tunnel to \(tunnel.authority)"))
            }
            guard destinationAllowed(host: tunnel.host) else {
                return .answered(.error(403, "\(tunnel.host) is not an allowed destination"))
            }
            target = url
            request = HTTPRequest(method: method, url: url)
        } else if configuration.upstream != nil {
            guard let reverse = reverseTarget(uri) else {
                return .answered(.error(400, "cannot route \(uri): invalid target"))
            }
            target = reverse.url
            request = HTTPRequest(
                method: method, scheme: upstreamScheme, authority: upstreamAuthority, path: reverse.path)
        } else {
            guard let forward = forwardTarget(uri) else {
                return .answered(.error(400, "cannot route \(uri): forward mode needs an absolute http URL"))
            }
            guard destinationAllowed(forward) else {
                return .answered(.error(403, "\(forward.host ?? "this host") is not an allowed destination"))
            }
            target = forward
            request = HTTPRequest(method: method, url: forward)
        }
        // The client's fields but `Host` (the target has the authority) and its connection's, with
        // room for `Via`.
        var fields = MessageFields.Gathering(capacity: head.fields.count + 1)
        for (index, field) in head.fields.enumerated() where !head.fieldName(at: index, is: "host") {
            guard let name = HTTPField.Name(head.name(of: field)) else { continue }
            fields.add(HTTPField(name: name, value: head.value(of: field)))
        }
        request.headerFields = fields.fields()
        addVia(to: &request.headerFields, version: head.version)
        return .cache(request, url: target, body: body.readableBytes > 0 ? Data(body.readableBytesView) : nil)
    }

    /// The cache's answer from its store alone, when it has one (see
    /// `HTTPCache.storedResponse(for:mode:)`), encoded for `clientHead`: no task, no suspension.
    ///
    /// Stored bodies of ``StoredBodyFile/minimumSize`` bytes or more go from their files to the
    /// socket without being read into memory; when such a file cannot be opened (removed since),
    /// the answer is left to the engine, which reads the body and handles a broken entry. A fresh
    /// answer's encoding is kept for other requests the same entry answers alike in the same
    /// second (``EncodedAnswers``). With the answer come the engine's terms for replaying it (a
    /// fresh answer) and its status, and for one range of a body sent from its file the head's
    /// fields without the range's own, for ``remember(_:terms:status:rangeFields:for:in:)``.
    ///
    /// Without an answer, the trip to the origin the engine decided on, when it decided one, for
    /// ``respond(to:url:body:interim:trip:)``.
    func storedAnswer(
        for request: HTTPRequest, url: URL, clientHead: RequestHead, persistence: ConnectionPersistence,
        allocator: ByteBufferAllocator, trip: inout HTTPCache.OriginTrip?
    ) -> (answer: EncodedAnswer, terms: ReplayTerms?, status: Int, rangeFields: ByteBuffer?)? {
        // The encoding the engine agreed to share, found while it decided.
        var kept: (key: EncodedAnswers.Key, encoding: EncodedAnswers.Encoding, status: Int)?
        var offered: (key: EncodedAnswers.Key, offer: AnswerOffer)?
        let stored = cache.storedAnswer(for: request, url: url, bodyFilesFrom: StoredBodyFile.minimumSize) { offer in
            let key = EncodedAnswers.Key(offer, isHead: clientHead.method == .HEAD, persistence: persistence)
            offered = (key, offer)
            guard let found = encodedAnswers.encoding(for: key), found.encoding.answers(offer) else { return false }
            kept = (key, found.encoding, found.status)
            return true
        }
        switch stored {
        case nil:
            return nil
        case .origin(let decided)?:
            trip = decided
            return nil
        case .shared(let terms, let offer)?:
            guard let kept else { return nil }
            metrics.countResponse(status: kept.status)
            switch kept.encoding {
            case .whole(let bytes):
                return (.bytes(bytes), terms, kept.status, nil)
            case .headBeforeFile(let encodedHead):
                // The file is opened for this answer; should it be gone, the engine answers.
                guard offer.bodyInFile, let file = cache.openBodyFile(of: terms).map(StoredBodyFile.init) else {
                    encodedAnswers.forget(kept.key)
                    return nil
                }
                return (.headThenFile(encodedHead, file), terms, kept.status, nil)
            case .rangeHeadFields(let fields):
                guard let range = offer.range, var file = cache.openBodyFile(of: terms).map(StoredBodyFile.init)
                else {
                    encodedAnswers.forget(kept.key)
                    return nil
                }
                let head = Self.rangeHead(
                    fields, range: range, of: &file, persistence: persistence, allocator: allocator)
                // Kept for replay as the way to answer any one range of the entry.
                return (.headThenFile(head, file), terms, kept.status, fields)
            }
        case .built(let response)?:
            var file: StoredBodyFile?
            if let stored = response.storedFile {
                guard var opened = cache.openBodyFile(of: response).map(StoredBodyFile.init) else { return nil }
                opened.offset = stored.range.lowerBound
                opened.size = stored.range.count
                file = opened
            }
            let outgoing = outgoing(response.head, body: file.map { .file($0) } ?? .whole(response.body))
            let answer = encode(outgoing, allocator: allocator, persistence: persistence, method: clientHead.method)
            if let offered { keep(answer, of: outgoing, built: response, file: file, offered: offered) }
            return (answer, response.replayTerms, response.head.status.code, nil)
        }
    }

    /// The head of a 206 for `range` of `file`'s body: `fields` (the answer's head without
    /// `Content-Range`, `Content-Length` and `Connection`), then those three; `file` is narrowed
    /// to the range.
    private static func rangeHead(
        _ fields: ByteBuffer, range: Range<Int>, of file: inout StoredBodyFile, persistence: ConnectionPersistence,
        allocator: ByteBufferAllocator
    ) -> ByteBuffer {
        let length = file.size
        (file.offset, file.size) = (range.lowerBound, range.count)
        var head = allocator.buffer(capacity: fields.readableBytes + ByteBuffer.longestRangeHeadEnd)
        head.writeImmutableBuffer(fields)
        head.writeRangeHeadEnd(range: range, completeLength: length, persistence: persistence)
        return head
    }

    /// Keeps the encoding of an answer the engine offered to share and then built, for the next
    /// requests it answers alike: a fresh whole answer (with its terms), or the 206 of the
    /// offered range sent from the body file, whose head is kept without its ending.
    private func keep(
        _ answer: EncodedAnswer, of outgoing: ProxyResponse, built response: CacheResponse, file: StoredBodyFile?,
        offered: (key: EncodedAnswers.Key, offer: AnswerOffer)
    ) {
        let status = response.head.status.code
        if let range = offered.offer.range {
            guard status == 206, let file, file.offset == range.lowerBound, file.size == range.count,
                case .headThenFile = answer
            else { return }
            var fields = ByteBuffer()
            fields.writeResponseHeadFields(outgoing.head)
            encodedAnswers.remember(.rangeHeadFields(fields), status: status, for: offered.key)
            return
        }
        guard response.replayTerms != nil else { return }
        switch answer {
        case .bytes(let bytes):
            encodedAnswers.remember(.whole(bytes), status: status, for: offered.key)
        case .headThenFile(let head, _):
            encodedAnswers.remember(.headBeforeFile(head), status: status, for: offered.key)
        case .wholeFile:
            break
        }
    }

    /// The answer this proxy sent to the same request before, when the engine confirms it still
    /// stands (``ReplayCache``), counted as sent; `nil` otherwise. For a request with a `Range`,
    /// a range of the entry the engine resolves anew.
    func replayedAnswer(
        to identity: RequestIdentity, from answers: ReplayCache, persistence: ConnectionPersistence,
        allocator: ByteBufferAllocator
    ) -> EncodedAnswer? {
        // An answer chosen for another client's field values is left for that client.
        guard let answer = answers.answer(to: identity), answer.selects(identity) else { return nil }
        let encoded: EncodedAnswer
        switch answer.wire {
        case .rangeOfEntryFile(let fields):
            return replayedRange(
                answer, fields: fields, to: identity, from: answers, persistence: persistence, allocator: allocator)
        case .buffer(let bytes):
            encoded = .bytes(bytes)
        case .headThenEntryFile(let responseHead):
            guard let file = cache.openBodyFile(of: answer.terms).map(StoredBodyFile.init) else {
                answers.forget(identity)
                return nil
            }
            encoded = .headThenFile(responseHead, file)
        case .wholeFile(let file):
            encoded = .wholeFile(file)
        }
        guard cache.confirmReplay(answer.terms) else {
            answers.forget(identity)
            return nil
        }
        metrics.countResponse(status: answer.status)
        return encoded
    }

    /// The range `identity`'s request asks for, of the entry `answer` sent a range of, when the
    /// engine confirms the entry stands and resolves the range to one of at least
    /// ``StoredBodyFile/minimumSize`` bytes; `nil` otherwise (the engine answers the request).
    private func replayedRange(
        _ answer: RecordedAnswer, fields: ByteBuffer, to identity: RequestIdentity, from answers: ReplayCache,
        persistence: ConnectionPersistence, allocator: ByteBufferAllocator
    ) -> EncodedAnswer? {
        guard identity.asksForRange else { return nil }
        guard var file = cache.openBodyFile(of: answer.terms).map(StoredBodyFile.init) else {
            answers.forget(identity)
            return nil
        }
        guard
            let resolved = identity.withRangeValue({
                cache.confirmRangeReplay(answer.terms, range: $0, minimumSize: StoredBodyFile.minimumSize)
            }), let range = resolved
        else { return nil }
        metrics.countResponse(status: 206)
        let head = Self.rangeHead(fields, range: range, of: &file, persistence: persistence, allocator: allocator)
        return .headThenFile(head, file)
    }

    /// Keeps an encoded fresh answer for the same request (see ``replayedAnswer(to:from:persistence:allocator:)``). A body
    /// that goes from its file is copied, with the head, into a ``WireFile`` when the whole
    /// answer is small enough to keep (``ReplayCache/largestWireFile``) and the platform has
    /// such files; otherwise its file is opened again for each replay.
    /// A request with a `Range` keeps only the 206 of one range sent from the entry's file, by its
    /// head's `rangeFields`, as the way to answer any range of the entry.
    func remember(
        _ encoded: EncodedAnswer, terms: ReplayTerms?, status: Int, rangeFields: ByteBuffer? = nil,
        for identity: RequestIdentity, in answers: ReplayCache
    ) {
        guard let terms, let selectingFields = Self.selectingFields(of: terms, for: identity) else { return }
        let wire: RecordedAnswer.Wire
        var rangeValue: String?
        if let rangeFields {
            guard identity.asksForRange, status == 206, answers.admits(identity) else { return }
            wire = .rangeOfEntryFile(rangeFields)
        } else {
            // Any other answer to a `Range` holds for that value of it alone.
            rangeValue = identity.range
            guard !identity.asksForRange || rangeValue != nil else { return }
            switch encoded {
            case .bytes(let bytes):
                guard answers.admits(identity) else { return }
                wire = .buffer(bytes)
            case .headThenFile(let head, let file):
                // Only a whole body: a range of it (a 206) is not replayed from the entry's file.
                guard file.offset == 0, file.size == file.file.size, answers.admits(identity) else { return }
                let whole =
                    head.readableBytes + file.size <= ReplayCache.largestWireFile
                    ? WireFile.make(
                        head: head, body: file.file.descriptor, bodySize: file.size, directory: wireFileDirectory)
                    : nil
                wire = whole.map { .wholeFile($0) } ?? .headThenEntryFile(head)
            case .wholeFile:
                return
            }
        }
        // Kept with bytes of its own: the head it came with shares the memory of a read.
        answers.remember(
            RecordedAnswer(
                wire: wire, status: status, terms: terms, selectingFields: selectingFields, rangeValue: rangeValue),
            for: identity.detached())
    }

    /// The client-specific fields of `identity`'s request that chose the answer under `terms`,
    /// with their values (``RecordedAnswer/selectingFields``); `nil` for an answer chosen by
    /// every field (`Vary: *`), which is not kept.
    static func selectingFields(of terms: ReplayTerms, for identity: RequestIdentity) -> [(
        name: String, value: String?
    )]? {
        var names: [String]
        switch terms.vary {
        case .none: names = []
        case .any: return nil
        case .fields(let fields): names = fields.map(\.canonicalName).filter(ClientSpecificFields.contains)
        }
        if terms.readsUserAgent, !names.contains("user-agent") { names.append("user-agent") }
        return names.map { ($0, identity.values(of: $0)) }
    }

    /// The cache's answer, from the store or the origin, or an error response that says what
    /// went wrong.
    ///
    /// `trip` is the engine's decision for the request, when
    /// ``storedAnswer(for:url:clientHead:persistence:allocator:trip:)`` has just made it.
    func respond(
        to request: HTTPRequest, url: URL, body: Data?, interim: InterimResponseHandler? = nil,
        trip: HTTPCache.OriginTrip? = nil
    ) async -> ProxyResponse {
        if let host = url.host, let refusal = await resolvedRefusal(for: host) { return refusal }
        do {
            let response = try await cache.streamingResponse(
                for: request, url: url, body: body, interim: interim, trip: trip)
            return outgoing(response.head, body: ProxyResponse.Body(response.body))
        } catch {
            return ErrorAnswers.response(for: error)
        }
    }

    private func outgoing(_ head: HTTPResponse, body: ProxyResponse.Body) -> ProxyResponse {
        var head = head
        addVia(to: &head.headerFields, version: .http1_1)
        return ProxyResponse(head: head, body: body)
    }

    /// Forward mode: the absolute-form target, `http` only.
    private func forwardTarget(_ uri: String) -> URL? {
        guard let url = URL(string: uri), url.scheme?.lowercased() == "http", url.host != nil else { return nil }
        return url
    }

    /// A reverse-mode target: its URL and the path (with query) that goes upstream. Recent
    /// targets seen more than once are kept, so that repeated requests skip parsing.
    func reverseTarget(_ uri: String) -> ReverseTarget? {
        guard let upstreamPrefix else { return nil }
        let key = ByteExactText(uri)
        if let known = reverseTargets.withLockedValue({ $0.targets[key] }) { return known }
        var path = uri
        if !path.hasPrefix("/") {
            guard let components = URLComponents(string: path), components.scheme != nil else { return nil }
            path =
                (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
                + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
        guard let url = URL(string: upstreamPrefix + path) else { return nil }
        let target = ReverseTarget(url: url, path: path)
        reverseTargets.withLockedValue { kept in
            if kept.seen.seenBefore(key.hashValue) { kept.targets[key] = target }
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

    /// Adds this proxy to `fields`' `Via` (RFC 9110 §7.6.3): appended to the one there, or a new
    /// field at the end (without the generic replacement of every `Via` a message without one
    /// would pay).
    func addVia(to fields: inout HTTPFields, version: HTTPVersion) {
        if let existing = fields[.via] {
            fields[.via] = appendingVia(existing, version: version)
        } else {
            fields.append(HTTPField(name: .via, value: appendingVia(nil, version: version)))
        }
    }

    func appendingVia(_ existing: String?, version: HTTPVersion) -> String {
        let entry =
            switch (version.major, version.minor) {
            case (1, 1): viaEntries.http11
            case (1, 0): viaEntries.http10
            default: "\(version.major).\(version.minor) \(configuration.viaName)"
            }
        return existing.map { "\($0), \(entry)" } ?? entry
    }
}
