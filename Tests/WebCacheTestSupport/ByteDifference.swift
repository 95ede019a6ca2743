import Foundation

/// Where `actual` first differs from `expected`, in words (`nil` when they are the same bytes),
/// for `#expect(byteDifference(received, body) == nil)`.
///
/// `#expect(received == body)` on two byte collections has Swift Testing work out their whole
/// difference when they differ: minutes of one cooperative thread for a body of a few hundred
/// kilobytes, while every other test waits. This says the lengths and the first differing offset
/// at once.
public func byteDifference(_ actual: some Sequence<UInt8>, _ expected: some Sequence<UInt8>) -> String? {
    let actual = Array(actual)
    let expected = Array(expected)
    guard actual != expected else { return nil }
    let offset =
        zip(actual, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        ?? min(actual.count, expected.count)
    func around(_ bytes: [UInt8]) -> String {
        let window = bytes[min(offset, bytes.count)..<min(offset + 16, bytes.count)]
        return window.isEmpty ? "(end)" : window.map { String($0, radix: 16) }.joined(separator: " ")
    }
    return "\(actual.count) bytes where \(expected.count) were expected; first difference at byte \(offset): "
        + "\(around(actual)) instead of \(around(expected))"
}
