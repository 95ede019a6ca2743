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
        guard let scheme = url.scheme else { return false }
        return equalsLowercase(scheme, "http") || equalsLowercase(scheme, "https")
    }

    /// Whether `text` is `lowercase` in any case of its ASCII letters, without making a
    /// lowercased copy. `lowercase` holds lowercase letters only.
    static func equalsLowercase(_ text: String, _ lowercase: StaticString) -> Bool {
        let bytes = text.utf8
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return lowercase.withUTF8Buffer { expected in
            // Setting bit 5 lowercases an ASCII capital and leaves a lowercase letter alone; no
            // other byte becomes a lowercase letter by it.
            bytes.elementsEqual(expected) { $0 | 0x20 == $1 }
        }
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
