import HTTPTypes

/// One member of an RFC 9211 `Cache-Status` field: what one cache did with a request.
///
/// ```swift
/// CacheStatus(cache: "WebCache", hit: true, ttl: 376).description
/// // "WebCache; hit; ttl=376"
/// CacheStatus(cache: "WebCache", forward: .stale, forwardStatus: 304, stored: true).description
/// // "WebCache; fwd=stale; fwd-status=304; stored"
/// ```
public struct CacheStatus: Sendable, Hashable, CustomStringConvertible {
    /// Why the request went forward to the origin (RFC 9211 §2.2).
    public struct Forward: Sendable, Hashable, CustomStringConvertible {
        /// The token written in the field.
        public let token: String

        /// Nothing was stored for the URI.
        public static let uriMiss = Forward(token: "uri-miss")
        /// Something was stored for the URI but its `Vary` did not match.
        public static let varyMiss = Forward(token: "vary-miss")
        /// Nothing usable was stored (a generic miss).
        public static let miss = Forward(token: "miss")
        /// A stored response was stale and had to be validated.
        public static let stale = Forward(token: "stale")
        /// The stored response was partial.
        public static let partial = Forward(token: "partial")
        /// The request's directives (e.g. `no-cache`) demanded it.
        public static let request = Forward(token: "request")
        /// The cache was configured not to handle this request.
        public static let bypass = Forward(token: "bypass")
        /// The request method is never served from cache.
        public static let method = Forward(token: "method")

        /// The token.
        public var description: String { token }
    }

    /// The cache's name, first in the member (an sf-token or string).
    public var cache: String
    /// Whether the request was answered from the cache without contacting the origin.
    public var hit: Bool
    /// Why the origin was contacted, when it was.
    public var forward: Forward?
    /// The status the origin answered with.
    public var forwardStatus: Int?
    /// Freshness left (negative: staleness) of the response served, in seconds.
    public var ttl: Int?
    /// Whether the response was stored.
    public var stored: Bool
    /// Whether the request shared another request's origin fetch.
    public var collapsed: Bool
    /// A free-form detail, e.g. `stale-while-revalidate` or `offline`.
    public var detail: String?

    /// Creates a member.
    public init(
        cache: String, hit: Bool = false, forward: Forward? = nil, forwardStatus: Int? = nil,
        ttl: Int? = nil, stored: Bool = false, collapsed: Bool = false, detail: String? = nil
    ) {
        self.cache = cache
        self.hit = hit
        self.forward = forward
        self.forwardStatus = forwardStatus
        self.ttl = ttl
        self.stored = stored
        self.collapsed = collapsed
        self.detail = detail
    }

    /// The member serialised as a Structured Field list member (RFC 9211 §2).
    public var description: String {
        var parts = [Self.isToken(cache) ? cache : Self.quoted(cache)]
        if hit { parts.append("hit") }
        if let forward { parts.append("fwd=\(forward.token)") }
        if let forwardStatus { parts.append("fwd-status=\(forwardStatus)") }
        if let ttl { parts.append("ttl=\(ttl)") }
        if stored { parts.append("stored") }
        if collapsed { parts.append("collapsed") }
        if let detail { parts.append("detail=\(Self.isToken(detail) ? detail : Self.quoted(detail))") }
        return parts.joined(separator: "; ")
    }

    static func isToken(_ text: String) -> Bool {
        guard let first = text.first, first.isLetter || first == "*" else { return false }
        return text.allSatisfy { $0.isHTTPTokenCharacter || $0 == ":" || $0 == "/" }
    }

    static func quoted(_ text: String) -> String {
        let printable = text.unicodeScalars.filter { $0.value >= 0x20 && $0.value < 0x7F }
        var result = "\""
        for scalar in printable {
            if scalar == "\"" || scalar == "\\" { result.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result + "\""
    }
}

extension HTTPFields {
    /// Adds a member to `Cache-Status`, in front of those of caches further upstream
    /// (RFC 9211 §2: the cache closest to the origin is listed first, so a new one is appended).
    public mutating func appendCacheStatus(_ status: CacheStatus) {
        append(HTTPField(name: .cacheStatus, value: status.description))
    }
}
