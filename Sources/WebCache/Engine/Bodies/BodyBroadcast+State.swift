import HTTPCaching
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The state of a ``BodyBroadcast``: its chunks, where they are (memory, the store's file, a
/// spill file, taken), its readers and its pace; each rule a mutating method run under the
/// broadcast's lock.
extension BodyBroadcast {
    /// A chunk of the body, where it is now.
    enum Chunk {
        case memory(Data)
        case inFile(file: Int, offset: Int, count: Int)
        /// Taken by the reader of a body read once, and let go.
        case taken(count: Int)

        var count: Int {
            switch self {
            case .memory(let data): data.count
            case .inFile(_, _, let count): count
            case .taken(let count): count
            }
        }
    }

    /// What a broadcast holds, under its lock, and the rules for placing, spilling, letting go
    /// and taking its chunks.
    struct State {
        var chunks: [Chunk] = []
        /// Where each chunk starts in the body.
        var starts: [Int] = []
        /// Where a file holds each chunk, once one does.
        var placed: [(file: Int, offset: Int)?] = []
        var received = 0
        var memoryBytes = 0
        /// Bytes placed in a spill file.
        var spilledBytes = 0
        /// For a body read once: the first chunk its reader has not taken.
        var nextToTake = 0
        /// The origin client's pace, when it can pause (``follow(_:)``).
        var pacing: OriginBodyPacing?
        /// The chunks before this one are reported to `pacing` as taken.
        var reportedUpTo = 0
        /// Readers iterating the body (``lease()``): while there are none, chunks count as
        /// taken as they arrive (a body nobody reads, or one collected, never holds up the origin).
        var leases = 0
        /// The files chunks are read back from.
        var files: [WrittenBody] = []
        /// The store's file (an index in `files`) and where the body starts in it.
        var storeFile: (index: Int, start: Int)?
        /// How many bytes of the body, from its start, the store's file holds.
        var inStoreFile = 0
        /// Makes the spill file when the body outgrows the budget without a file to lean on.
        var makeSpill: (@Sendable () throws -> SpillFile)?
        var spill: (file: SpillFile, index: Int)?
        /// The first chunk not placed in a file yet (placing goes in order).
        var nextToPlace = 0
        /// The first chunk that may still be in memory.
        var nextToLetGo = 0
        var finished = false
        /// The origin's stream ended with every byte: what is left is storing it.
        var arrivedWhole = false
        var failure: (any Error)?
        /// Readers waiting for the next chunk, each with a number its cancellation finds it by.
        var waiting: [(reader: UInt64, continuation: CheckedContinuation<Data?, any Error>)] = []
        var lastWaitingReader: UInt64 = 0
        /// One reader takes the body, once: from the start, or since its storing stopped.
        var readOnce: Bool
        /// Another reader than the first was let in (``admitsAnotherReader()``): the body is
        /// kept whole for it, never read once.
        var shared = false
        /// Whether a reader ever iterated the body (``lease()``), or the request answered with
        /// it said none would (``unread()``).
        var readerCameOrWillNot = false
        /// Callers of ``firstBytes(_:)`` and ``ended()``, each with the bytes it waits for.
        var progressWaiters: [(bytes: Int, continuation: CheckedContinuation<Void, any Error>)] = []

        /// Whether the body is read once, still arriving, and no reader will take the rest: its
        /// reader came and went, or none will come.
        var nobodyReadsTheRest: Bool {
            readOnce && readerCameOrWillNot && leases == 0 && stillArriving
        }

        /// Whether the body is still arriving from the origin (not whole, ended nor failed).
        var stillArriving: Bool {
            !arrivedWhole && !finished && failure == nil
        }

        /// A reader starts iterating the body.
        mutating func addLease() {
            leases += 1
            readerCameOrWillNot = true
        }

        /// Takes out the progress waiters whose bytes have arrived (all of them once the body has
        /// ended or failed).
        mutating func progressDue() -> [CheckedContinuation<Void, any Error>] {
            guard !progressWaiters.isEmpty else { return [] }
            let ended = finished || failure != nil
            let due = progressWaiters.filter { ended || $0.bytes <= received }.map(\.continuation)
            if !due.isEmpty { progressWaiters.removeAll { ended || $0.bytes <= received } }
            return due
        }

        /// What memory may hold before chunks are spilled: the budget; four times it for a body
        /// read once at its reader's pace, which the pause bounds already (at
        /// ``OriginBodyPacing/pauseAbove`` not taken, plus what the connection had read by then),
        /// so that such a body goes to disk only if its reader stops taking it.
        var spillAbove: Int {
            readOnce && pacing != nil && leases > 0 ? 4 * BodyBroadcast.memoryBudget : BodyBroadcast.memoryBudget
        }

        /// Places chunks in the spill file, when spilling, while memory is over ``spillAbove``.
        mutating func spillChunks() {
            guard memoryBytes > spillAbove, let makeSpill else { return }
            do {
                if spill == nil {
                    let file = try makeSpill()
                    spill = (file, files.count)
                    files.append(file.contents)
                }
            } catch {
                self.makeSpill = nil  // no file to spill to (a full disk): the body stays in memory
                return
            }
            guard let spill else { return }
            while nextToPlace < chunks.count {
                guard case .memory(let data) = chunks[nextToPlace] else {
                    nextToPlace += 1
                    continue
                }
                do {
                    placed[nextToPlace] = (spill.index, try spill.file.append(data))
                    spilledBytes += data.count
                } catch {
                    self.makeSpill = nil  // the disk is full: the rest stays in memory
                    return
                }
                nextToPlace += 1
            }
        }

        /// The chunk at `index` as a reader finds it now: in memory, in a file, past the end (or
        /// the failure), or not arrived yet.
        func ready(at index: Int) -> Ready {
            if index < chunks.count {
                switch chunks[index] {
                case .memory(let data): return .result(.success(data))
                case .inFile(let file, let offset, let count): return .inFile(files[file], offset: offset, count: count)
                case .taken:
                    return .result(
                        .failure(
                            CacheError(
                                .bodyAlreadyRead,
                                "the body of a response the cache does not keep is read once: its bytes from \(starts[index]) on were let go as they were read"
                            )))
                }
            }
            if let failure { return .result(.failure(failure)) }
            if finished { return .result(.success(nil)) }
            return .waiting
        }

        /// The reader of a body read once has taken every chunk before `index`: they are let go.
        mutating func taken(before index: Int) {
            let end = min(index, chunks.count)
            while nextToTake < end {
                if case .memory(let data) = chunks[nextToTake] { memoryBytes -= data.count }
                chunks[nextToTake] = .taken(count: chunks[nextToTake].count)
                nextToTake += 1
            }
            nextToPlace = max(nextToPlace, nextToTake)
            nextToLetGo = max(nextToLetGo, nextToTake)
        }

        /// The reader of a body read once has taken the chunks before `index`: they are let go,
        /// and the pacing to tell how many bytes that is (those it has not been told of yet).
        mutating func takeChunks(before index: Int) -> (OriginBodyPacing?, Int) {
            guard readOnce else { return (nil, 0) }
            taken(before: index)
            guard let pacing, reportedUpTo < index else { return (nil, 0) }
            let end = min(index, chunks.count)
            let bytes = chunks[reportedUpTo..<end].reduce(0) { $0 + $1.count }
            reportedUpTo = max(reportedUpTo, end)
            return (pacing, bytes)
        }

        /// Lets the oldest placed chunks go from memory while it holds more than the budget.
        mutating func letGo() {
            while memoryBytes > BodyBroadcast.memoryBudget, nextToLetGo < chunks.count, let place = placed[nextToLetGo]
            {
                if case .memory(let data) = chunks[nextToLetGo] {
                    chunks[nextToLetGo] = .inFile(file: place.file, offset: place.offset, count: data.count)
                    memoryBytes -= data.count
                }
                nextToLetGo += 1
            }
        }
    }

    /// The chunk a reader asked for, as it finds it now.
    enum Ready {
        case result(Result<Data?, any Error>)
        case inFile(WrittenBody, offset: Int, count: Int)
        case waiting
    }
}
