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
                    body: .whole(Data(metricsExposition()))))
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
        if let existing = fields.value(.via) {
            fields[.via] = appendingVia(existing, version: version)
        } else {
            fields.append(HTTPField(name: .via, value: appendingVia(nil, version: version)))
        }
    }

    private func appendingVia(_ existing: String?, version: HTTPVersion) -> String {
        let entry =
            switch (version.major, version.minor) {
            case (1, 1): viaEntries.http11
            case (1, 0): viaEntries.http10
            default: "\(version.major).\(version.minor) \(configuration.viaName)"
            }
        return existing.map { "\($0), \(entry)" } ?? entry
    }
}
