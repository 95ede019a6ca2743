#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

import NIOCore
import NIOHTTP1
import WebCache
import WebCacheStore

/// A request head as it came, for recognising the same request again: method, target, version
/// and every header field, in order and byte for byte. Two requests with the same identity are
/// routed the same way and get the same answer from the same store.
struct RequestIdentity: Hashable, Sendable {
    let head: HTTPRequestHead

    func hash(into hasher: inout Hasher) {
        hasher.combine(head.method.rawValue)
        hasher.combine(head.uri)
        hasher.combine(head.version.major)
        hasher.combine(head.version.minor)
        hasher.combine(head.headers.count)
        for (name, value) in head.headers {
            hasher.combine(name)
            hasher.combine(value)
        }
    }

    /// Byte for byte: Swift's `==` on strings would also match canonically equivalent ones.
    static func == (lhs: RequestIdentity, rhs: RequestIdentity) -> Bool {
        let (left, right) = (lhs.head, rhs.head)
        guard left.method == right.method, left.version == right.version, sameBytes(left.uri, right.uri),
            left.headers.count == right.headers.count
        else { return false }
        return zip(left.headers, right.headers).allSatisfy { sameBytes($0.name, $1.name) && sameBytes($0.value, $1.value) }
    }

    private static func sameBytes(_ left: String, _ right: String) -> Bool {
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

/// A fresh answer from the store as it went on the wire, kept for the same request.
struct RepeatedAnswer: Sendable {
    /// The encoded head (with the body, unless that goes from a file); unused with ``wireFile``.
    var bytes: ByteBuffer
    /// Whether the body goes from the entry's file after ``bytes``.
    var sendsFile: Bool
    /// The whole answer in one file, for bodies that would go from their files and are small
    /// enough to copy (``RepeatedAnswers/largestAnswer``).
    var wireFile: WireFile?
    /// The response's status code, for the metrics.
    var status: Int
    /// The engine's terms for repeating it.
    var terms: RepeatableAnswer
}

/// Encoded answers to recent requests, sent again while the engine confirms they stand
/// (`HTTPCache.repeatAnswer`): a hit repeated this way skips routing, the reuse decision and the
/// encoding. Bounded in count and bytes; when full it starts again empty.
final class RepeatedAnswers: Sendable {
    static let capacity = 4096
    static let byteBudget = 8 << 20
    /// The most one answer may cost; dearer ones are not kept.
    static let largestAnswer = byteBudget / 16
    /// What a kept answer costs besides its bytes: its key, its entry.
    static let keyCost = 256
    /// The largest ``WireFile`` an answer may have.
    static let largestWireFile = largestAnswer - keyCost

    private struct State {
        var answers: [RequestIdentity: RepeatedAnswer] = [:]
        var bytes = 0
    }

    private let state = Locked(State())

    func answer(to head: HTTPRequestHead) -> RepeatedAnswer? {
        let identity = RequestIdentity(head: head)
        return state.withLock { $0.answers[identity] }
    }

    func remember(_ answer: RepeatedAnswer, for head: HTTPRequestHead) {
        let cost = Self.cost(of: answer)
        guard cost <= Self.largestAnswer else { return }
        let identity = RequestIdentity(head: head)
        state.withLock { state in
            if state.answers.count >= Self.capacity || state.bytes + cost > Self.byteBudget {
                state.answers.removeAll(keepingCapacity: true)
                state.bytes = 0
            }
            if let replaced = state.answers.updateValue(answer, forKey: identity) {
                state.bytes -= Self.cost(of: replaced)
            }
            state.bytes += cost
        }
    }

    func forget(_ head: HTTPRequestHead) {
        let identity = RequestIdentity(head: head)
        state.withLock { state in
            if let removed = state.answers.removeValue(forKey: identity) {
                state.bytes -= Self.cost(of: removed)
            }
        }
    }

    /// What an answer counts against ``byteBudget``: its buffer, its wire file, and a little for
    /// its key.
    private static func cost(of answer: RepeatedAnswer) -> Int {
        answer.bytes.capacity + (answer.wireFile?.size ?? 0) + keyCost
    }
}
