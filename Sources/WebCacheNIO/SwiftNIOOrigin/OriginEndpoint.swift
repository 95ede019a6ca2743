import HTTPCaching
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where connections to an origin go: scheme, host and port.
struct OriginEndpoint: Hashable, Sendable, CustomStringConvertible {
    var isSecure: Bool
    var host: String
    var port: Int

    /// The endpoint of an absolute `http` or `https` URL.
    init?(_ url: URL) {
        guard HTTPURLs.isAbsoluteHTTP(url), let host = url.host else { return nil }
        isSecure = url.scheme?.lowercased() == "https"
        self.host = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        port = url.port ?? (isSecure ? 443 : 80)
        guard (1...65535).contains(port) else { return nil }
    }

    /// Whether the host is an IP address (then it names no TLS server: no SNI).
    var hostIsAddress: Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
    }

    /// The `Host` field: the host, bracketed when IPv6, with the port unless it is the default.
    var authority: String {
        HTTPURLs.authority(host: host, port: port == (isSecure ? 443 : 80) ? nil : port)
    }

    var description: String { "\(isSecure ? "https" : "http")://\(authority)" }
}
