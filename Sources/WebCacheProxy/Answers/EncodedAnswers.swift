import HTTPCaching
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The encoding of fresh answers from the store, kept per entry for the second their `Age`
/// reads the same: requests that differ in their bytes (each browser's cookies, user agent,
/// tracing headers) but are answered by the same entry, with nothing that changes the answer,
/// share one encoding instead of each building and writing the response head again.
///
/// The engine still decides every request (lookup, `Vary`, the reuse decision): when the answer
/// is fresh it offers it here (`HTTPCache.storedAnswer(for:url:bodyFilesFrom:sharing:)`) under
/// its terms' identity (entry, store and settings revisions, the second of `Age`), and the
/// method and the connection's persistence complete the key — so a change to the store or the
/// settings, or the next second, gives a new key. A shared answer is counted and recorded as a
/// hit by the engine, which then builds neither head nor body.
/// A single `Range` of a body sent from its file shares the head of every such range of the
/// answer: all but its `Content-Range` and `Content-Length`, which are written per request.
/// Requests with a precondition (`If-None-Match`, `If-Modified-Since`, `If-Match`,
/// `If-Unmodified-Since`) or other ranges are answered per request and never kept. Bounded in
/// count and bytes; when full, the oldest encodings go one by one to make room.
///
/// An encoding is kept only for an entry answered within the last second before
/// (``admissionWindow``): in front of tens of thousands of pages, each asked for every few
/// seconds, keeping every answer's encoding would cost an insertion and an eviction per request
/// and serve none, since the next request comes in another second of `Age`.
final class EncodedAnswers: Sendable {
    /// Entries answered within one second, at most: past it, the oldest encodings make room.
    static let capacity = 1 << 14
    /// Bytes of encodings held: whole answers of small bodies, heads of bodies sent from files.
    static let byteBudget = 16 << 20
    /// The largest encoding kept.
    static let largestAnswer = 64 << 10

    /// The engine's identity of the answer (it offers only answers that no precondition makes
    /// the request's own), whether it is a range of the body, the method and the connection's
    /// persistence.
    struct Key: Hashable, Sendable {
        let answer: ReplayTerms.AnswerIdentity
        let isRange: Bool
        let isHead: Bool
        let persistence: ConnectionPersistence

        init(_ offer: AnswerOffer, isHead: Bool, persistence: ConnectionPersistence) {
            answer = offer.identity
            isRange = offer.range != nil
            self.isHead = isHead
            self.persistence = persistence
        }
    }

    /// An answer's encoding: the whole answer, the head before a body sent from its file, or
    /// the head of a range of it without its ending (`writeResponseHeadEnd`).
    enum Encoding: Sendable {
        case whole(ByteBuffer)
        case headBeforeFile(ByteBuffer)
        case rangeHeadFields(ByteBuffer)

        var bytes: ByteBuffer {
            switch self {
            case .whole(let bytes), .headBeforeFile(let bytes), .rangeHeadFields(let bytes): bytes
            }
        }

        /// Whether it is the encoding of what `offer` offers.
        func answers(_ offer: AnswerOffer) -> Bool {
            switch self {
            case .whole: !offer.bodyInFile && offer.range == nil
            case .headBeforeFile: offer.bodyInFile && offer.range == nil
            case .rangeHeadFields: offer.range != nil
            }
        }
    }

    private struct State {
        var encodings = BoundedTable<Key, (encoding: Encoding, status: Int)>(capacity: EncodedAnswers.capacity)
        var bytes = 0
        /// Entries answered lately, with when.
        var answered = SeenRecently(slots: EncodedAnswers.answeredSlots, window: EncodedAnswers.admissionWindow)
    }

    /// Slots of entries remembered as answered (512 KiB).
    static let answeredSlots = 1 << 15
    /// How soon an entry must be answered again for its encoding to be kept: an encoding stands
    /// for one second of `Age`.
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

    /// How many encodings are kept.
    var count: Int { state.withLockedValue { $0.encodings.count } }

    func encoding(for key: Key) -> (encoding: Encoding, status: Int)? {
        state.withLockedValue { $0.encodings[key] }
    }

    func forget(_ key: Key) {
        state.withLockedValue { state in
            if let removed = state.encodings.removeValue(forKey: key) {
                state.bytes -= removed.encoding.bytes.readableBytes
            }
        }
    }

    /// Keeps `encoding` for `key` when its entry was answered within the last
    /// ``admissionWindow``; either way the entry is noted as answered now.
    func remember(_ encoding: Encoding, status: Int, for key: Key) {
        let size = encoding.bytes.readableBytes
        let now = self.now
        state.withLockedValue { state in
            let entry = Int(truncatingIfNeeded: key.answer.entryID)
            guard state.answered.seenRecently(entry, now: now), size <= Self.largestAnswer else { return }
            let (replaced, letGo) = state.encodings.updateValue((encoding, status), forKey: key)
            for gone in [replaced, letGo] {
                if let gone { state.bytes -= gone.encoding.bytes.readableBytes }
            }
            state.bytes += size
            // The oldest go, one by one, until the rest fit (never the new one: it is far below
            // the budget).
            while state.bytes > Self.byteBudget, let gone = state.encodings.removeOldest() {
                state.bytes -= gone.encoding.bytes.readableBytes
            }
        }
    }
}
