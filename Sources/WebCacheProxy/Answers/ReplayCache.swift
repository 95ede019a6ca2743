import HTTPCaching
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A fresh answer from the store as it went on the wire, kept for the same request.
///
/// A class, immutable: finding it in the table costs one retain, where a copy of its fields
/// costs one for each.
final class RecordedAnswer: Sendable {
    /// How an answer goes on the wire again.
    enum Wire: Sendable {
        /// Head and body, encoded in memory.
        case buffer(ByteBuffer)
        /// The encoded head, then the body from the entry's file, opened again for each replay.
        case headThenEntryFile(ByteBuffer)
        /// Head and body in one file (for bodies that go from their files and are small enough
        /// to copy: ``ReplayCache/largestWireFile``).
        case wholeFile(WireFile)
        /// The head fields of a 206 without `Content-Range`, `Content-Length` and `Connection`,
        /// then the range the engine resolves for each request from the entry's file.
        case rangeOfEntryFile(ByteBuffer)
    }

    let wire: Wire
    /// The response's status code, for the metrics.
    let status: Int
    /// The engine's terms for replaying it.
    let terms: ReplayTerms
    /// The client-specific fields (``ClientSpecificFields``) the answer was chosen by, with the
    /// values of the request it answered (`nil`: absent): those the stored response's `Vary`
    /// names, and `User-Agent` when the cache's policy allows by user agent. Usually none.
    let selectingFields: [(name: String, value: String?)]
    /// For a request with a `Range` answered otherwise than with one range from the entry's file
    /// (several ranges, a short one, a 416, the whole body), the `Range` it answered: replayed
    /// only to that value, byte for byte.
    let rangeValue: String?

    init(
        wire: Wire, status: Int, terms: ReplayTerms, selectingFields: [(name: String, value: String?)] = [],
        rangeValue: String? = nil
    ) {
        self.wire = wire
        self.status = status
        self.terms = terms
        self.selectingFields = selectingFields
        self.rangeValue = rangeValue
    }

    /// Whether this answer is the one for `identity`'s request: its client-specific fields that
    /// chose the answer hold the same values, byte for byte.
    func selects(_ identity: RequestIdentity) -> Bool {
        if let rangeValue {
            guard let range = identity.range, ByteExactText.sameBytes(range, rangeValue) else { return false }
        }
        return selectingFields.allSatisfy { field in
            switch (field.value, identity.values(of: field.name)) {
            case (nil, nil): true
            case (let recorded?, let current?): ByteExactText.sameBytes(recorded, current)
            default: false
            }
        }
    }
}

/// Encoded answers to recent requests, sent again while the engine confirms they stand
/// (`HTTPCache.confirmReplay`): a hit replayed this way skips routing, the reuse decision and the
/// encoding. Bounded in count, in bytes held in memory and in bytes of ``WireFile``s; when full,
/// the oldest answers go one by one to make room.
///
/// Only a request seen within the last second is worth keeping an answer for (``admits(_:)``):
/// where every request is for something new (a crawler, a preloader), or each comes back only
/// after its answer has stopped standing (a shared proxy in front of tens of thousands of pages),
/// keeping each answer would cost an encoded copy — for large bodies a new file — per request,
/// never used.
///
/// An answer stands for the rest of its second of `Age` at most, so the table need hold only the
/// answers of about a second: 16,384 of them, enough for a busy site's hot set (a table smaller
/// than the set refills itself over and over, which costs more than it saves).
final class ReplayCache: Sendable {
    static let capacity = 16_384
    /// Bytes of encoded answers held in memory.
    static let byteBudget = 16 << 20
    /// The most memory one answer may take; dearer ones are not kept.
    static let largestAnswer = 512 << 10
    /// What a kept answer costs besides its bytes: its key, its entry.
    static let keyCost = 256
    /// Bytes of wire files (the file system's page cache, or memory where files cannot be made).
    static let wireFileBudget = 32 << 20
    /// The largest ``WireFile`` an answer may have: 2 MiB.
    static let largestWireFile = wireFileBudget / 16

    private struct Cost {
        var memory = 0
        var files = 0

        mutating func add(_ other: Cost) {
            memory += other.memory
            files += other.files
        }

        mutating func subtract(_ other: Cost) {
            memory -= other.memory
            files -= other.files
        }
    }

    private struct State {
        var answers = BoundedTable<RequestIdentity, RecordedAnswer>(capacity: ReplayCache.capacity)
        var cost = Cost()
        /// Hashes of request heads seen lately, with when.
        var seen = SeenRecently(slots: ReplayCache.seenSlots, window: ReplayCache.admissionWindow)
    }

    /// Slots of heads remembered as seen (512 KiB).
    static let seenSlots = 1 << 15
    /// How soon a head must come again for its answer to be kept: an answer stands for the rest
    /// of its second of `Age` at most, so a head that came longer ago than that is likely to come
    /// again too late.
    static let admissionWindow = Duration.seconds(1)

    private let state = NIOLockedValueBox(State())
    /// The engine's clock (`HTTPCache.clock`), which also tells the answers' `Age`.
    private let clock: @Sendable () -> Date

    /// An empty table whose admission reads `clock`.
    init(clock: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
    }

    /// The clock's time, as ``SeenRecently`` takes it.
    private var now: UInt64 { SeenRecently.time(clock()) }

    /// How many answers are kept.
    var count: Int { state.withLockedValue { $0.answers.count } }

    func answer(to identity: RequestIdentity) -> RecordedAnswer? {
        return state.withLockedValue { $0.answers[identity] }
    }

    /// Whether an answer to `identity` is worth keeping: when the same head (by hash) came within
    /// the last ``admissionWindow``. Either way it is noted as seen now.
    func admits(_ identity: RequestIdentity) -> Bool {
        let now = self.now
        return state.withLockedValue { $0.seen.seenRecently(identity.digest, now: now) }
    }

    func remember(_ answer: RecordedAnswer, for identity: RequestIdentity) {
        let cost = Self.cost(of: answer)
        guard cost.memory <= Self.largestAnswer, cost.files <= Self.largestWireFile else { return }
        state.withLockedValue { state in
            let (replaced, letGo) = state.answers.updateValue(answer, forKey: identity)
            for gone in [replaced, letGo] {
                if let gone { state.cost.subtract(Self.cost(of: gone)) }
            }
            state.cost.add(cost)
            // The oldest go, one by one, until the rest fit (never the new one: one answer is
            // far below either budget).
            while state.cost.memory > Self.byteBudget || state.cost.files > Self.wireFileBudget,
                let gone = state.answers.removeOldest()
            {
                state.cost.subtract(Self.cost(of: gone))
            }
        }
    }

    /// Lets the answer to `identity` go (it no longer stands: its `Age` moved on, its entry
    /// changed). The head is noted as seen now, so the next answer made for it is kept at once
    /// (``admits(_:)``): a hot page's answer is not lost for two requests every second.
    func forget(_ identity: RequestIdentity) {
        let now = self.now
        state.withLockedValue { state in
            if let removed = state.answers.removeValue(forKey: identity) {
                state.cost.subtract(Self.cost(of: removed))
                state.seen.note(identity.digest, now: now)
            }
        }
    }

    /// What an answer counts against ``byteBudget`` (its buffer, and a little for its key) and
    /// against ``wireFileBudget``.
    private static func cost(of answer: RecordedAnswer) -> Cost {
        switch answer.wire {
        case .buffer(let bytes), .headThenEntryFile(let bytes), .rangeOfEntryFile(let bytes):
            Cost(memory: bytes.capacity + keyCost)
        case .wholeFile(let file): Cost(memory: keyCost, files: file.size)
        }
    }
}
