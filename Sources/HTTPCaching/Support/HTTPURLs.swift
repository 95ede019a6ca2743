#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The few URL rules every front door shares: what counts as an http(s) URL the cache can take,
/// and how a host and port are written in a `Host` field.
package enum HTTPURLs {
    /// Whether `url` has the `http` or `https` scheme (in any case).
    package static func isHTTP(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased() else { return false }
        return scheme == "http" || scheme == "https"
    }

    /// Whether `url` is an absolute `http` or `https` URL with a host.
    package static func isAbsoluteHTTP(_ url: URL) -> Bool {
        isHTTP(url) && !(url.host ?? "").isEmpty
    }

    /// `host[:port]` as a `Host` field or URL authority writes it: an IPv6 address in brackets
    /// (RFC 3986 §3.2.2), the port only when given.
    package static func authority(host: String, port: Int?) -> String {
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return port.map { "\(bracketed):\($0)" } ?? bracketed
    }
}
