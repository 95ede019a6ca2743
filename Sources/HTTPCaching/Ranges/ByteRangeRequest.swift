/// A `Range` request field in the `bytes` unit (RFC 9110 §14.1.1, §14.2), parsed.
///
/// ```swift
/// let ranges = ByteRangeRequest("bytes=0-99, -500")!
/// ranges.resolve(length: 10_000)   // .satisfiable([0..<100, 9500..<10000])
/// ```
///
/// Parsing never traps: numbers too long for an `Int` saturate, and anything outside the grammar
/// (another unit, a missing `=`, `5-3`, a sign) makes the whole field invalid, which a server
/// ignores (RFC 9110 §14.2).
public struct ByteRangeRequest: Sendable, Hashable {
    /// One range as the client wrote it.
    public enum Spec: Sendable, Hashable {
        /// `first-last` or `first-` (`last` is `nil`): positions, inclusive.
        case from(Int, through: Int?)
        /// `-length`: the last `length` bytes.
        case suffix(Int)
    }

    /// The ranges in the order given.
    public var specs: [Spec]

    /// The most ranges answered in one multipart response; a request with more is answered
    /// whole (a defence against requests for many tiny overlapping pieces, RFC 9110 §14.2).
    public static let maximumRanges = 16

    /// Parses a `Range` field value; `nil` when it is not a valid `bytes` range set.
    public init?(_ value: String) {
        var text = Substring(value)
        text = text.drop { $0 == " " || $0 == "\t" }
        guard text.count > 6, text.prefix(6).lowercased() == "bytes=" else { return nil }
        var specs: [Spec] = []
        for item in text.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false) {
            let spec = item.trimmingHTTPWhitespace()
            if spec.isEmpty { continue }  // RFC 9110 §5.6.1: empty list elements are ignored
            guard let dash = spec.firstIndex(of: "-") else { return nil }
            let firstText = spec[..<dash]
            let lastText = spec[spec.index(after: dash)...]
            if firstText.isEmpty {
                guard let length = Self.number(lastText) else { return nil }
                specs.append(.suffix(length))
            } else {
                guard let first = Self.number(firstText) else { return nil }
                if lastText.isEmpty {
                    specs.append(.from(first, through: nil))
                } else {
                    guard let last = Self.number(lastText), last >= first else { return nil }
                    specs.append(.from(first, through: last))
                }
            }
        }
        guard !specs.isEmpty else { return nil }
        self.specs = specs
    }

    /// Creates a request from specs.
    public init(specs: [Spec]) {
        self.specs = specs
    }

    /// What the request asks of a representation of `length` bytes.
    public enum Resolution: Sendable, Hashable {
        /// The ranges to send, in ascending order, overlapping and adjacent ones merged.
        case satisfiable([Range<Int>])
        /// None of the ranges overlaps the representation: 416 (RFC 9110 §15.5.17).
        case unsatisfiable
        /// Too many ranges: answer with the whole representation.
        case whole
    }

    /// Resolves the ranges against a representation of `length` bytes (RFC 9110 §14.1.2).
    public func resolve(length: Int) -> Resolution {
        guard specs.count <= Self.maximumRanges else { return .whole }
        var ranges: [Range<Int>] = []
        for spec in specs {
            switch spec {
            case .from(let first, let last):
                guard first < length else { continue }
                let end = min(last.map { $0 == Int.max ? Int.max : $0 + 1 } ?? length, length)
                ranges.append(first..<end)
            case .suffix(let suffix):
                guard suffix > 0, length > 0 else { continue }
                ranges.append(max(0, length - suffix)..<length)
            }
        }
        guard !ranges.isEmpty else { return .unsatisfiable }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = [ranges[0]]
        for range in ranges.dropFirst() {
            if range.lowerBound <= merged[merged.count - 1].upperBound {
                merged[merged.count - 1] = merged[merged.count - 1].lowerBound..<max(merged[merged.count - 1].upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return .satisfiable(merged)
    }

    /// Digits only; saturates at `Int.max` instead of overflowing.
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        var value = 0
        for digit in text.utf8 {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(digit - 48))
            if overflow1 || overflow2 { return Int.max }
            value = sum
        }
        return value
    }
}
