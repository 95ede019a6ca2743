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
struct ProxyResponse: Sendable {
    var head: HTTPResponse
    var body: ResponseBodyStream

    static func error(_ status: Int, _ message: String) -> ProxyResponse {
        var head = HTTPResponse(status: .init(code: status))
        head.headerFields[.contentType] = "text/plain; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        return ProxyResponse(head: head, body: ResponseBodyStream(Data((message + "\n").utf8)))
    }
}

extension CachingProxy {
    /// Turns a client request into a cache request and the cache's answer into a response.
    func respond(to head: HTTPRequestHead, body: ByteBuffer) async -> ProxyResponse {
        if let metricsPath = configuration.metricsPath, head.method == .GET, head.uri == metricsPath {
            var response = HTTPResponse(status: .ok)
            response.headerFields[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            response.headerFields[.cacheControl] = "no-store"
            return ProxyResponse(head: response, body: ResponseBodyStream(Data(metrics.exposition(engine: cache.counters))))
        }
        guard let target = targetURL(for: head) else {
            return .error(400, "cannot route \(head.uri): \(configuration.upstream == nil ? "forward mode needs an absolute URL" : "invalid target")")
        }
        if configuration.upstream == nil, !destinationAllowed(target) {
            return .error(403, "\(target.host ?? "this host") is not an allowed destination")
        }
        guard let method = HTTPRequest.Method(head.method.rawValue) else { return .error(400, "invalid method") }
        var request = HTTPRequest(method: method, url: target)
        for header in head.headers {
            guard let name = HTTPField.Name(header.name), name.canonicalName != "host" else { continue }
            request.headerFields.append(HTTPField(name: name, value: header.value))
        }
        request.headerFields = MessageFields.removingHopByHop(request.headerFields)
        request.headerFields[.via] = appendingVia(request.headerFields[.via], version: head.version)
        let requestBody = body.readableBytes > 0 ? Data(body.readableBytesView) : nil
        do {
            let response = try await cache.streamingResponse(for: request, body: requestBody)
            var outgoing = response.head
            outgoing.headerFields[.via] = appendingVia(outgoing.headerFields[.via], version: .http1_1)
            return ProxyResponse(head: outgoing, body: response.body)
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

    func targetURL(for head: HTTPRequestHead) -> URL? {
        if let upstream = configuration.upstream {
            guard head.uri.hasPrefix("/") else { return URL(string: head.uri) }
            return URL(string: upstream.absoluteString.trimmingSuffix("/") + head.uri)
        }
        guard let url = URL(string: head.uri), url.scheme?.lowercased() == "http", url.host != nil else { return nil }
        return url
    }

    func destinationAllowed(_ url: URL) -> Bool {
        destinationAllowed(host: url.host ?? "")
    }

    func destinationAllowed(host: String) -> Bool {
        guard !configuration.allowedDestinations.isEmpty else { return true }
        let host = host.lowercased()
        return configuration.allowedDestinations.contains { allowed in
            let allowed = allowed.lowercased()
            return host == allowed || host.hasSuffix("." + allowed)
        }
    }

    func appendingVia(_ existing: String?, version: HTTPVersion) -> String {
        let entry = "\(version.major).\(version.minor) \(configuration.viaName)"
        return existing.map { "\($0), \(entry)" } ?? entry
    }

    /// Writes a response: a whole body in one trip to the event loop, a body still arriving
    /// chunk by chunk as it arrives (with the origin's `Content-Length`, or chunked). A body
    /// that fails half-way closes the connection, so the client sees it was cut short.
    func write(_ response: ProxyResponse, to channel: any Channel, keepAlive: Bool, method: NIOHTTP1.HTTPMethod) async {
        let code = response.head.status.code
        metrics.countResponse(status: code)
        let bodyAllowed = method != .HEAD && code != 204 && code != 304 && code >= 200
        let complete = response.body.completeBody
        var headers = HTTPHeaders()
        for field in response.head.headerFields where field.name != .contentLength && field.name != .transferEncoding {
            headers.add(name: field.name.rawName, value: field.value)
        }
        if let complete, bodyAllowed {
            headers.add(name: "Content-Length", value: String(complete.count))
        } else if let length = response.head.headerFields[.contentLength] {
            headers.add(name: "Content-Length", value: length)
        } else if !bodyAllowed && code >= 200 && code != 204 && code != 304 {
            headers.add(name: "Content-Length", value: "0")
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: code, reasonPhrase: response.head.status.reasonPhrase)
        let head = HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))
        if let complete {
            let body = bodyAllowed && !complete.isEmpty ? ByteBuffer(bytes: complete) : nil
            channel.eventLoop.execute {
                channel.write(head, promise: nil)
                if let body { channel.write(HTTPServerResponsePart.body(.byteBuffer(body)), promise: nil) }
                channel.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
            }
            return
        }
        do {
            try await channel.writeAndFlush(head)
            if bodyAllowed {
                for try await chunk in response.body where !chunk.isEmpty {
                    try await channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(bytes: chunk))))
                }
            }
            try await channel.writeAndFlush(HTTPServerResponsePart.end(nil))
        } catch {
            logger.debug("response cut short: \(error)")
            try? await channel.close()
        }
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

    /// Connects to a tunnel's destination on the client connection's event loop.
    func connectTunnel(to destination: TunnelDestination, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        ClientBootstrap(group: eventLoop)
            .connectTimeout(.nanoseconds(configuration.connectTimeout.nanoseconds))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connect(host: destination.host, port: destination.port)
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
