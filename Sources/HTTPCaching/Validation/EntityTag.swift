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
    /// Read as bytes, as HTTP defines it (RFC 9110 §8.8.3).
    public init?(parsing text: some StringProtocol) {
        let bytes = text.utf8
        let quote = UInt8(ascii: "\"")
        let trimmed = bytes.httpWhitespaceTrimmed()
        var (start, end) = (trimmed.lowerBound, trimmed.upperBound)
        var weak = false
        if start < end, bytes[start] == UInt8(ascii: "W") || bytes[start] == UInt8(ascii: "w") {
            let slash = bytes.index(after: start)
            if slash < end, bytes[slash] == UInt8(ascii: "/") {
                weak = true
                start = bytes.index(after: slash)
            }
        }
        if start < end, bytes[start] == quote {
            // `"…"`: the last byte a quote too, and none between.
            start = bytes.index(after: start)
            guard let closing = bytes[start..<end].firstIndex(of: quote), bytes.index(after: closing) == end else {
                return nil
            }
            end = closing
        } else if start == end
            || bytes[start..<end].contains(where: { $0 == UInt8(ascii: " ") || $0 == quote || $0 == UInt8(ascii: "\t") }
            )
        {
            return nil
        }
        self.init(String(text[start..<end]), weak: weak)
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
