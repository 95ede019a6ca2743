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
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else {
            return nil
        }
        isSecure = scheme == "https"
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
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return port == (isSecure ? 443 : 80) ? bracketed : "\(bracketed):\(port)"
    }

    var description: String { "\(isSecure ? "https" : "http")://\(authority)" }
}
