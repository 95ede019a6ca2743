/// A `Content-Range` field in the `bytes` unit (RFC 9110 §14.4): which bytes of the whole
/// representation a partial response carries, and how long the whole is.
///
/// ```swift
/// ContentRange("bytes 0-4/10")    // range 0..<5, complete length 10
/// ContentRange("bytes 5-9/*")     // range 5..<10, complete length unknown
/// ContentRange("bytes */10")      // nil: that is the form of a 416, not of a part
/// ```
public struct ContentRange: Sendable, Hashable, CustomStringConvertible {
    /// The positions of the bytes carried, in the whole representation.
    public var range: Range<Int>
    /// The length of the whole representation, when the sender knew it.
    public var completeLength: Int?

    /// A range of a representation of `completeLength` bytes.
    public init(range: Range<Int>, completeLength: Int?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// Parses `bytes first-last/length` (or `/*`); `nil` for anything else, for a last position
    /// before the first, or one at or past a known length. Numbers too long for an `Int` make
    /// the field invalid rather than trap.
    public init?(_ value: String) {
        let trimmed = value.trimmingHTTPWhitespace()
        guard trimmed.hasPrefix("bytes ") else { return nil }
        let rest = trimmed.dropFirst("bytes ".count)
        guard let slash = rest.firstIndex(of: "/"), let dash = rest[..<slash].firstIndex(of: "-"),
            let first = Self.position(rest[..<dash]), let last = Self.position(rest[rest.index(after: dash)..<slash]),
            first <= last,
            last < Int.max
        else { return nil }
        let lengthText = rest[rest.index(after: slash)...]
        if lengthText == "*" {
            completeLength = nil
        } else {
            guard let length = Self.position(lengthText), last < length else { return nil }
            completeLength = length
        }
        range = first..<(last + 1)
    }

    /// The field value: `bytes first-last/length`.
    public var description: String {
        "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(completeLength.map(String.init) ?? "*")"
    }

    /// Whether the part is the whole representation.
    public var isComplete: Bool {
        range.lowerBound == 0 && completeLength == range.upperBound
    }

    private static func position(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 18,
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else {
            return nil
        }
        return Int(text)
    }
}
