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
        var text = Self.isToken(cache) ? cache : Self.quoted(cache)
        text.reserveCapacity(text.utf8.count + 48)
        if hit { text += "; hit" }
        if let forward { text += "; fwd=" + forward.token }
        if let forwardStatus { text += "; fwd-status=" + String(forwardStatus) }
        if let ttl { text += "; ttl=" + String(ttl) }
        if stored { text += "; stored" }
        if collapsed { text += "; collapsed" }
        if let detail { text += "; detail=" + (Self.isToken(detail) ? detail : Self.quoted(detail)) }
        return text
    }

    /// Whether `text` is an sf-token (RFC 8941 §3.3.4): ALPHA or `*`, then tchar, `:` or `/`.
    static func isToken(_ text: String) -> Bool {
        var bytes = text.utf8.makeIterator()
        guard let first = bytes.next(), isAlpha(first) || first == UInt8(ascii: "*") else { return false }
        while let byte = bytes.next() {
            guard isAlpha(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || tokenSymbols.contains(byte)
            else {
                return false
            }
        }
        return true
    }

    private static func isAlpha(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    /// The tchar symbols (RFC 9110 §5.6.2), with `:` and `/` that sf-tokens allow too.
    private static let tokenSymbols: Set<UInt8> = Set("!#$%&'*+-.^_`|~:/".utf8)

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
