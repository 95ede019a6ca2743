import ArgumentParser

/// A size given on the command line: bytes (`1048576`), or a number with a binary unit — `k`,
/// `m`, `g` or `t`, with or without `b` or `ib` after it, in any case (`512k`, `64MiB`, `2g`,
/// `1.5GiB`). A fraction (up to three digits) needs a unit; the result is whole bytes, rounded
/// down.
struct ByteCount: ExpressibleByArgument, Sendable, Equatable {
    let bytes: Int

    init?(argument: String) {
        guard let bytes = Self.parse(argument) else { return nil }
        self.bytes = bytes
    }

    static let help = "bytes, or with k, m, g or t (binary: 2g is 2 GiB)"

    /// The bytes `text` names; `nil` when it is not a size, is negative, or does not fit an `Int`.
    static func parse(_ text: String) -> Int? {
        var number = Substring(text.lowercased())
        let binarySuffix = number.hasSuffix("ib")
        number = number.dropLast(binarySuffix ? 2 : number.hasSuffix("b") ? 1 : 0)
        let shifts: [Character: Int] = ["k": 10, "m": 20, "g": 30, "t": 40]
        var shift = 0
        if let last = number.last, let unit = shifts[last] {
            shift = unit
            number = number.dropLast()
        } else if binarySuffix {
            return nil  // "ib" with no unit before it
        }
        let parts = number.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit),
            let wholeValue = Int(whole)
        else { return nil }
        let (scaled, overflow) = wholeValue.multipliedReportingOverflow(by: 1 << shift)
        guard !overflow else { return nil }
        guard parts.count == 2 else { return scaled }
        // A fraction: only with a unit, and only digits after the point.
        let fraction = parts[1]
        guard shift > 0, !fraction.isEmpty, fraction.count <= 3, fraction.allSatisfy(\.isASCIIDigit),
            let fractionValue = Int(fraction)
        else { return nil }
        var denominator = 1
        for _ in 0..<fraction.count { denominator *= 10 }
        let extra = (fractionValue << shift) / denominator
        let (total, overflowed) = scaled.addingReportingOverflow(extra)
        return overflowed ? nil : total
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
