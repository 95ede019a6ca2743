/// How long a response stays fresh, and why (RFC 9111 §4.2.1, §4.2.2).
public struct Freshness: Sendable, Hashable, CustomStringConvertible {
    /// Where the lifetime came from.
    public enum Source: Sendable, Hashable {
        /// `s-maxage` in a shared cache.
        case sharedMaxAge
        /// `max-age`.
        case maxAge
        /// `Expires` minus `Date`.
        case expires
        /// A heuristic from `Last-Modified`.
        case heuristic
        /// Nothing gave a lifetime: the response is stale from the start.
        case none
        /// A directive or `Expires` was present but unreadable or contradictory: stale.
        case invalid(String)
    }

    /// The freshness lifetime in seconds (0 when stale from the start).
    public var lifetime: Int
    /// Where it came from.
    public var source: Source
    /// The field the explicit lifetime was read from (e.g. `CDN-Cache-Control`), when not
    /// `Cache-Control`.
    public var field: String?

    /// Whether the lifetime was guessed rather than given by the origin.
    public var isHeuristic: Bool { source == .heuristic }

    /// Whether the origin gave an explicit lifetime (valid or not).
    public var isExplicit: Bool {
        switch source {
        case .sharedMaxAge, .maxAge, .expires, .invalid: return true
        case .heuristic, .none: return false
        }
    }

    /// The lifetime and its source in words, e.g. `max-age=3600`.
    public var description: String {
        let prefix = field.map { "\($0) " } ?? ""
        switch source {
        case .sharedMaxAge: return "\(prefix)s-maxage=\(lifetime)"
        case .maxAge: return "\(prefix)max-age=\(lifetime)"
        case .expires: return "Expires − Date = \(lifetime) s"
        case .heuristic: return "heuristic lifetime \(lifetime) s from Last-Modified"
        case .none: return "no explicit lifetime and no heuristic"
        case .invalid(let why): return "stale: \(why)"
        }
    }
}
