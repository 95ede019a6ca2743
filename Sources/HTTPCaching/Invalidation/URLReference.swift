#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// URI helpers for `Location` and `Content-Location` (RFC 3986 resolution, RFC 6454 origins).
public enum URLReference {
    /// Resolves a reference (absolute or relative) against a base URI; `nil` when malformed.
    public static func resolve(_ reference: String, against base: URL) -> URL? {
        URL(string: reference, relativeTo: base)?.absoluteURL
    }

    /// Whether two URIs share scheme, host and port (RFC 6454 §4).
    public static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        guard let lScheme = lhs.scheme?.lowercased(), let rScheme = rhs.scheme?.lowercased(),
            lScheme == rScheme, lhs.host?.lowercased() == rhs.host?.lowercased()
        else { return false }
        return effectivePort(lhs) == effectivePort(rhs)
    }

    /// Whether two URIs name the same resource: same origin, path and query, ignoring fragments.
    public static func sameResource(_ lhs: URL, _ rhs: URL) -> Bool {
        sameOrigin(lhs, rhs) && lhs.path == rhs.path && lhs.query == rhs.query
    }

    static func effectivePort(_ url: URL) -> Int? {
        if let port = url.port { return port }
        switch url.scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }
}
