import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The primary cache key (RFC 9111 §2): the request method and the target URI, query included.
///
/// The URI is normalised only where RFC 3986 says two spellings are the same resource: the
/// scheme and host are lower-cased and the fragment is dropped. The query string is never
/// dropped or reordered.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The request method, e.g. `GET`.
    public let method: String
    /// The absolute target URI.
    public let url: String
    /// The host, lower-cased, for per-host listing and removal.
    public let host: String

    /// The key for `method` and `url`; `nil` when `url` is not absolute (no scheme or host).
    public init?(method: HTTPRequest.Method = .get, url: URL) {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        components.scheme = scheme
        components.host = host
        components.fragment = nil
        if components.path.isEmpty { components.path = "/" }
        guard let normalized = components.string else { return nil }
        self.method = method.rawValue
        self.url = normalized
        self.host = host
    }

    /// The key of a request: its method and its absolute URI.
    public init?(request: HTTPRequest) {
        guard let url = request.url else { return nil }
        self.init(method: request.method, url: url)
    }

    /// Recreates a key read from the index.
    init(storedMethod: String, url: String, host: String) {
        self.method = storedMethod
        self.url = url
        self.host = host
    }

    /// `GET https://example.com/a?b=1`
    public var description: String { "\(method) \(url)" }
}
