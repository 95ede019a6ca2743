#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Text compared byte for byte, as a dictionary key: Swift's `==` on strings also matches
/// canonically equivalent ones ("café" precomposed and decomposed), which in a request are
/// different targets and different field values.
struct ByteExactText: Hashable, Sendable {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    /// The string's own hash: equal bytes hash equally, and equivalent texts only collide.
    func hash(into hasher: inout Hasher) {
        hasher.combine(text)
    }

    static func == (lhs: ByteExactText, rhs: ByteExactText) -> Bool {
        sameBytes(lhs.text, rhs.text)
    }

    /// Whether `left` and `right` are the same UTF-8 bytes.
    static func sameBytes(_ left: String, _ right: String) -> Bool {
        let (left, right) = (left.utf8, right.utf8)
        guard left.count == right.count else { return false }
        // Native strings are contiguous UTF-8: compare them as memory.
        let compared = left.withContiguousStorageIfAvailable { leftBytes in
            right.withContiguousStorageIfAvailable { rightBytes in
                leftBytes.isEmpty || memcmp(leftBytes.baseAddress!, rightBytes.baseAddress!, leftBytes.count) == 0
            }
        }
        return (compared ?? nil) ?? left.elementsEqual(right)
    }
}
