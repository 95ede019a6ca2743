/// An entity tag (RFC 9110 §8.8.3), e.g. `"abc"` or `W/"abc"`.
public struct EntityTag: Sendable, Hashable, CustomStringConvertible {
    /// Whether the tag is weak (`W/` prefix).
    public var isWeak: Bool
    /// The opaque tag without quotes.
    public var opaqueTag: String

    /// Creates a tag.
    public init(_ opaqueTag: String, weak: Bool = false) {
        self.opaqueTag = opaqueTag
        self.isWeak = weak
    }

    /// Parses one tag; an unquoted value is accepted as a lenient reading of broken servers.
    public init?(parsing text: some StringProtocol) {
        var rest = Substring(text.trimmingHTTPWhitespace())
        var weak = false
        if rest.hasPrefix("W/") || rest.hasPrefix("w/") {
            weak = true
            rest = rest.dropFirst(2)
        }
        if rest.first == "\"" {
            guard rest.count >= 2, rest.last == "\"" else { return nil }
            rest = rest.dropFirst().dropLast()
            guard !rest.contains("\"") else { return nil }
        } else if rest.isEmpty || rest.contains(where: { $0 == " " || $0 == "\"" || $0 == "\t" }) {
            return nil
        }
        self.init(String(rest), weak: weak)
    }

    /// Parses a comma-separated list such as `If-None-Match` (commas inside quotes are kept).
    public static func parseList(_ values: [String]) -> [EntityTag] {
        values.flatMap { CacheControlParser.splitList($0) }.compactMap { EntityTag(parsing: $0) }
    }

    /// The tag as written in a field: `"abc"` or `W/"abc"`.
    public var description: String { (isWeak ? "W/" : "") + "\"\(opaqueTag)\"" }

    /// RFC 9110 §8.8.3.2 strong comparison: both strong and identical.
    public func strongMatches(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaqueTag == other.opaqueTag
    }

    /// RFC 9110 §8.8.3.2 weak comparison: identical opaque tags.
    public func weakMatches(_ other: EntityTag) -> Bool {
        opaqueTag == other.opaqueTag
    }
}
