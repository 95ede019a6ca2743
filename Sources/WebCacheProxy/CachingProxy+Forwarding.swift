import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response on its way to the client.
struct ProxyResponse: Sendable {
    var head: HTTPResponse
    var body: Data

    static func error(_ status: Int, _ message: String) -> ProxyResponse {
        var head = HTTPResponse(status: .init(code: status))
        head.headerFields[.contentType] = "text/plain; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        return ProxyResponse(head: head, body: Data((message + "\n").utf8))
    }
}

extension CachingProxy {
    /// Turns a client request into a cache request and the cache's answer into a response.
    func respond(to head: HTTPRequestHead, body: ByteBuffer) async -> ProxyResponse {
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
            let response = try await cache.response(for: request, body: requestBody)
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
        guard !configuration.allowedDestinations.isEmpty else { return true }
        let host = (url.host ?? "").lowercased()
        return configuration.allowedDestinations.contains { allowed in
            let allowed = allowed.lowercased()
            return host == allowed || host.hasSuffix("." + allowed)
        }
    }

    func appendingVia(_ existing: String?, version: HTTPVersion) -> String {
        let entry = "\(version.major).\(version.minor) \(configuration.viaName)"
        return existing.map { "\($0), \(entry)" } ?? entry
    }

    func write(
        _ response: ProxyResponse, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>, keepAlive: Bool,
        method: NIOHTTP1.HTTPMethod
    ) async throws {
        var headers = HTTPHeaders()
        for field in response.head.headerFields where field.name != .contentLength && field.name != .transferEncoding {
            headers.add(name: field.name.rawName, value: field.value)
        }
        let code = response.head.status.code
        let bodyAllowed = method != .HEAD && code != 204 && code != 304 && code >= 200
        if method == .HEAD, let length = response.head.headerFields[.contentLength] {
            headers.add(name: "Content-Length", value: length)
        } else if bodyAllowed || response.head.headerFields[.contentLength] != nil {
            headers.add(name: "Content-Length", value: String(bodyAllowed ? response.body.count : Int(response.head.headerFields[.contentLength] ?? "0") ?? 0))
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let status = HTTPResponseStatus(statusCode: code, reasonPhrase: response.head.status.reasonPhrase)
        try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        if bodyAllowed && !response.body.isEmpty {
            try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body))))
        }
        try await outbound.write(.end(nil))
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
