import HTTPTypes

/// The RFC 9111 rules for one kind of cache: every question a cache asks about a request and a
/// stored response, answered as values, with reasons in words.
///
/// `CacheRules` is pure: it reads no clock and does no I/O; the time is always passed in.
///
/// ```swift
/// let rules = CacheRules(kind: .shared, targetedFields: [TargetedCacheControl.cdnCacheControl])
/// let storability = rules.storability(of: response, for: request)
/// let decision = rules.reuse(stored, for: request, now: .now)
/// print(decision.explanation)   // "fresh for 3542 s more (max-age=3600, age 58 s)"
/// ```
///
/// ## Topics
///
/// ### Storing
/// - ``storability(of:for:)``
///
/// ### Freshness
/// - ``freshness(of:)``
/// - ``age(of:now:)``
///
/// ### Reuse
/// - ``reuse(_:for:now:conditions:)``
///
/// ### Validation
/// - ``conditionalRequest(for:revalidating:)``
/// - ``updating(_:with:requestTime:responseTime:)``
///
/// ### Invalidation
/// - ``invalidations(for:response:)``
public struct CacheRules: Sendable {
    /// Whether the cache serves one user (private) or many (shared).
    public var kind: CacheKind
    /// Targeted cache-control fields this cache obeys over `Cache-Control`, first match wins
    /// (RFC 9213). Usually empty for a private cache and `[CDN-Cache-Control]` for a proxy.
    public var targetedFields: [HTTPField.Name]
    /// How freshness is guessed for responses without explicit freshness.
    public var heuristic: HeuristicFreshness
    /// Status codes whose semantics this cache implements (for `must-understand`, §5.2.2.3).
    public var understoodStatusCodes: Set<Int>

    /// Creates the rules for a cache.
    public init(
        kind: CacheKind,
        targetedFields: [HTTPField.Name] = [],
        heuristic: HeuristicFreshness = .init(),
        understoodStatusCodes: Set<Int> = CacheRules.defaultUnderstoodStatusCodes
    ) {
        self.kind = kind
        self.targetedFields = targetedFields
        self.heuristic = heuristic
        self.understoodStatusCodes = understoodStatusCodes
    }

    /// The rules of a browser-like cache in an app.
    public static var `private`: CacheRules { CacheRules(kind: .private) }

    /// The rules of a proxy that obeys `CDN-Cache-Control`.
    public static var shared: CacheRules {
        CacheRules(kind: .shared, targetedFields: [TargetedCacheControl.cdnCacheControl])
    }

    /// RFC 9110 §15.1: status codes that are heuristically cacheable.
    public static let heuristicallyCacheableStatusCodes: Set<Int> = [
        200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
    ]

    /// The final status codes defined by RFC 9110 whose caching semantics this module implements.
    public static let defaultUnderstoodStatusCodes: Set<Int> = [
        200, 201, 202, 203, 204, 205, 300, 301, 302, 303, 304, 307, 308,
        400, 401, 403, 404, 405, 406, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421, 422,
        426, 500, 501, 502, 503, 504, 505,
    ]
}

/// The kind of cache the rules serve (RFC 9111 §1).
public struct CacheKind: Sendable, Hashable, CustomStringConvertible {
    private let isShared: Bool

    /// A cache used by a single user, like a browser's or an app's (`private` responses allowed).
    public static let `private` = CacheKind(isShared: false)
    /// A cache shared by many users, like a proxy or a CDN.
    public static let shared = CacheKind(isShared: true)

    /// Whether this is a shared cache.
    public var shared: Bool { isShared }

    /// `"private"` or `"shared"`.
    public var description: String { isShared ? "shared" : "private" }
}

/// How a cache guesses a freshness lifetime for a response that gives none (RFC 9111 §4.2.2):
/// a fraction of the time since `Last-Modified`, never more than ``maximum``.
public struct HeuristicFreshness: Sendable, Hashable {
    /// The fraction of the response's age since `Last-Modified`; RFC 9111 suggests 10%.
    public var fraction: Double
    /// The cap on a heuristic lifetime, in seconds.
    public var maximum: Int

    /// Creates a heuristic: by default 10% of the time since last modification, at most a day.
    public init(fraction: Double = 0.1, maximum: Int = 86_400) {
        self.fraction = max(0, fraction)
        self.maximum = max(0, maximum)
    }

    /// Never assign a heuristic lifetime.
    public static let disabled = HeuristicFreshness(fraction: 0, maximum: 0)
}
