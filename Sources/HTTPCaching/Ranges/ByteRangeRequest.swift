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

    /// Parses a `Range` field value; `nil` when it is not a valid `bytes` range set. Read byte
    /// by byte: every range request (a video seeking) goes through it.
    public init?(_ value: String) {
        var value = value
        var specs: [Spec] = []
        guard let count = value.withUTF8({ Self.parse($0) { specs.append($0) } }), count > 0 else { return nil }
        self.specs = specs
    }

    /// The range a field value of exactly one range asks of a representation of `length` bytes,
    /// as ``resolve(length:)`` would resolve it, without building arrays: a player's every seek
    /// comes through here. `nil` when the value is not valid, holds more than one range, or its
    /// range is unsatisfiable; parse it with ``init(_:)`` to tell those apart.
    public static func singleRange(_ value: String, length: Int) -> Range<Int>? {
        var value = value
        return value.withUTF8 { singleRange(utf8: $0, length: length) }
    }

    /// ``singleRange(_:length:)`` for a field value's bytes as they came (a value that is not
    /// UTF-8 is not a valid range either).
    public static func singleRange(utf8 value: UnsafeBufferPointer<UInt8>, length: Int) -> Range<Int>? {
        var only: Spec?
        guard parse(value, { only = $0 }) == 1, let only else { return nil }
        return range(of: only, length: length)
    }

    /// Reads `bytes=` then a comma-separated list of `first-[last]` and `-suffix` (RFC 9110
    /// §14.1.1), optional whitespace around elements, empty elements ignored (§5.6.1), handing
    /// each range to `visit` in order: the number of ranges, or `nil` when the value is not valid
    /// (some ranges may have been visited by then).
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, _ visit: (Spec) -> Void) -> Int? {
        var index = 0
        func isWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while index < bytes.count, isWhitespace(bytes[index]) { index += 1 }
        let unit: StaticString = "bytes="
        guard bytes.count - index > unit.utf8CodeUnitCount else { return nil }
        for offset in 0..<unit.utf8CodeUnitCount {  // the unit is case-insensitive
            let byte = bytes[index + offset]
            guard
                ((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte) == unit.utf8Start[offset]
            else { return nil }
        }
        index += unit.utf8CodeUnitCount
        var count = 0
        while index <= bytes.count {
            var end = index
            while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
            var low = index
            var high = end
            while low < high, isWhitespace(bytes[low]) { low += 1 }
            while high > low, isWhitespace(bytes[high - 1]) { high -= 1 }
            if low < high {  // an empty element is skipped
                guard let dash = (low..<high).first(where: { bytes[$0] == UInt8(ascii: "-") }) else { return nil }
                let firstText = UnsafeBufferPointer(rebasing: bytes[low..<dash])
                let lastText = UnsafeBufferPointer(rebasing: bytes[(dash + 1)..<high])
                if firstText.isEmpty {
                    guard let length = number(lastText) else { return nil }
                    visit(.suffix(length))
                } else {
                    guard let first = number(firstText) else { return nil }
                    if lastText.isEmpty {
                        visit(.from(first, through: nil))
                    } else {
                        guard let last = number(lastText), last >= first else { return nil }
                        visit(.from(first, through: last))
                    }
                }
                count += 1
            }
            index = end + 1
        }
        return count
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
        var ranges = specs.compactMap { Self.range(of: $0, length: length) }
        guard !ranges.isEmpty else { return .unsatisfiable }
        ranges.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = [ranges[0]]
        for range in ranges.dropFirst() {
            if range.lowerBound <= merged[merged.count - 1].upperBound {
                merged[merged.count - 1] =
                    merged[merged.count - 1].lowerBound..<max(merged[merged.count - 1].upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return .satisfiable(merged)
    }

    /// The bytes `spec` asks of a representation of `length` bytes; `nil` when none.
    private static func range(of spec: Spec, length: Int) -> Range<Int>? {
        switch spec {
        case .from(let first, let last):
            guard first < length else { return nil }
            return first..<min(last.map { $0 == Int.max ? Int.max : $0 + 1 } ?? length, length)
        case .suffix(let suffix):
            guard suffix > 0, length > 0 else { return nil }
            return max(0, length - suffix)..<length
        }
    }

    /// Digits only; saturates at `Int.max` instead of overflowing.
    private static func number(_ digits: UnsafeBufferPointer<UInt8>) -> Int? {
        guard !digits.isEmpty else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(digit - 48))
            if overflow1 || overflow2 { return Int.max }
            value = sum
        }
        return value
    }
}
