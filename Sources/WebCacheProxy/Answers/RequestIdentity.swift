import HTTPWire
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A request head as it came, for recognising the same request again: the request line and
/// every field, in order and byte for byte — except the fields each client sends its own way
/// and no cached answer is chosen by (``ClientSpecificFields``), so that the same request from
/// another browser is recognised too. Two requests with the same identity are routed the same
/// way and get the same answer from the same store, unless the answer depends on one of those
/// fields after all (``RecordedAnswer/selects(_:)`` checks). A `Range` counts by its name, not
/// its value: one range of an entry's body is kept as the way to answer any range of it, which
/// the engine resolves for each request (a player's seeks).
///
/// Worked out on the head's bytes, without a `String`: the hash once, when the identity is
/// made (a request is looked up, admitted and remembered under one identity), and equality as
/// comparisons of memory.
struct RequestIdentity: Hashable, Sendable {
    let head: RequestHead
    /// The hash of every part of the head that counts.
    let digest: Int
    /// Whether the head has a `Range` field.
    let asksForRange: Bool
    /// Where the value of the head's one `Range` field lies in its bytes; `nil` when it has none
    /// or several.
    private let rangeValueSpan: Range<Int>?
    /// The destination of the intercepted tunnel the request came through, if any: requests in
    /// tunnels to different sites are different requests, whatever their heads say.
    let tunnel: String?

    init(head: RequestHead, tunnel: String? = nil) {
        self.head = head
        self.tunnel = tunnel
        var hasher = Hasher()
        hasher.combine(tunnel)
        var asksForRange = false
        var rangeValueSpan: Range<Int>?
        head.withUnsafeBytes { raw in
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: raw[Self.requestLine(of: head)]))
            for field in head.fields {
                let name = UnsafeRawBufferPointer(rebasing: raw[field.name])
                guard !ClientSpecificFields.contains(bytes: name) else { continue }
                // Lengths too, so that the bytes of two fields cannot run into each other.
                hasher.combine(name.count)
                hasher.combine(bytes: name)
                if Self.isRange(name) {
                    // A second `Range` leaves none to use.
                    rangeValueSpan = asksForRange ? nil : field.value
                    asksForRange = true
                } else {
                    let value = UnsafeRawBufferPointer(rebasing: raw[field.value])
                    hasher.combine(value.count)
                    hasher.combine(bytes: value)
                }
            }
        }
        digest = hasher.finalize()
        self.asksForRange = asksForRange
        self.rangeValueSpan = rangeValueSpan
    }

    /// The identity with a head of its own bytes, to be kept (a head parsed from a read shares
    /// that read's memory).
    func detached() -> RequestIdentity {
        RequestIdentity(
            head: head.detached(), digest: digest, asksForRange: asksForRange, rangeValueSpan: rangeValueSpan,
            tunnel: tunnel)
    }

    private init(head: RequestHead, digest: Int, asksForRange: Bool, rangeValueSpan: Range<Int>?, tunnel: String?) {
        self.head = head
        self.digest = digest
        self.asksForRange = asksForRange
        self.rangeValueSpan = rangeValueSpan
        self.tunnel = tunnel
    }

    /// The request line: method, target and version, without its CRLF.
    private static func requestLine(of head: RequestHead) -> Range<Int> {
        0..<(head.target.upperBound + 9)
    }

    /// Whether a field name is `Range`, in any case.
    static func isRange(_ name: UnsafeRawBufferPointer) -> Bool {
        RequestHead.equalsIgnoringCase(name, "range")
    }

    /// The value of the head's `Range` field, when it has exactly one.
    var range: String? {
        withRangeValue { String(decoding: $0, as: UTF8.self) }
    }

    /// `body` on the bytes of the value of the head's `Range` field, when it has exactly one;
    /// `nil` otherwise.
    func withRangeValue<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result? {
        guard let span = rangeValueSpan else { return nil }
        return head.withUnsafeBytes { raw in
            body(UnsafeRawBufferPointer(rebasing: raw[span]).bindMemory(to: UInt8.self))
        }
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(digest)
    }

    /// Byte for byte, the client's own fields aside.
    static func == (lhs: RequestIdentity, rhs: RequestIdentity) -> Bool {
        guard lhs.digest == rhs.digest, lhs.tunnel == rhs.tunnel else { return false }
        return lhs.head.withUnsafeBytes { left in
            rhs.head.withUnsafeBytes { right in
                guard same(left, requestLine(of: lhs.head), right, requestLine(of: rhs.head)) else { return false }
                var others = rhs.head.fields.lazy.filter {
                    !ClientSpecificFields.contains(bytes: UnsafeRawBufferPointer(rebasing: right[$0.name]))
                }.makeIterator()
                for field in lhs.head.fields
                where !ClientSpecificFields.contains(bytes: UnsafeRawBufferPointer(rebasing: left[field.name])) {
                    guard let other = others.next(), same(left, field.name, right, other.name) else { return false }
                    guard
                        isRange(UnsafeRawBufferPointer(rebasing: left[field.name]))
                            || same(left, field.value, right, other.value)
                    else { return false }
                }
                return others.next() == nil
            }
        }
    }

    /// Whether `leftRange` of `left` holds the same bytes as `rightRange` of `right`.
    private static func same(
        _ left: UnsafeRawBufferPointer, _ leftRange: Range<Int>, _ right: UnsafeRawBufferPointer,
        _ rightRange: Range<Int>
    ) -> Bool {
        guard leftRange.count == rightRange.count else { return false }
        guard leftRange.count > 0 else { return true }
        return memcmp(
            left.baseAddress! + leftRange.lowerBound, right.baseAddress! + rightRange.lowerBound, leftRange.count)
            == 0
    }

    /// The values of the field `name` (any case) in this head, joined by commas as they came;
    /// `nil` when it has none.
    func values(of name: String) -> String? {
        var name = name
        let values = name.withUTF8 { wanted in
            head.withUnsafeBytes { raw in
                head.fields.filter { field in
                    let fieldName = UnsafeRawBufferPointer(rebasing: raw[field.name])
                    return fieldName.count == wanted.count
                        && zip(fieldName, wanted).allSatisfy { HTTPBytes.lowercased($0) == HTTPBytes.lowercased($1) }
                }
            }
        }
        return values.isEmpty ? nil : values.map(head.value(of:)).joined(separator: ",")
    }
}
