import Dispatch
import HTTPCaching

/// One writer for the index's new rows: rows that arrive while a transaction is under way wait
/// and go into the next one together (up to ``maximumBatch``), so that a hundred misses stored
/// at once cost a few transactions, not a hundred (each one a lock, a journal append and an
/// eviction check).
///
/// The writer runs on a queue of its own: a caller on an event loop is resumed when its row is
/// in, and reads (hits) never wait for it — the index is in WAL mode. A row that fails alone
/// (rather than the whole transaction) fails only its own caller: the writer decides that.
///
/// When the rows run out, the writer stays on its thread for a moment (`linger`) in case more
/// come, and it writes as background work (``BackgroundWriting``): under a steady stream of
/// misses it is woken without preempting the event loop that feeds it, so rows gather into
/// batches even when both share one core.
///
/// The writer keeps its pace (wall time per row) so that callers who store faster than it
/// writes can wait for their share of the backlog (``backlog``, ``backlogWritten(downTo:atMost:)``).
///
/// Every call names the writer, a function that writes a batch in one transaction and returns a
/// result for each row, in order; the one that starts the queue is used until it runs dry. (It
/// is not kept, so that the store it belongs to does not hold itself.)
final class GroupCommit<Row: Sendable, Written: Sendable>: Sendable {
    typealias Completion = @Sendable (Result<Written, any Error>) -> Void
    typealias Writer = @Sendable ([Row]) -> [Result<Written, any Error>]

    private struct State {
        var pending: [(row: Row, completion: Completion)] = []
        var writing = false
        /// The writer waits on ``moreRows`` for the next row; the first submitter wakes it.
        var writerLingering = false
        var batchesWritten = 0
        var writerStarts = 0
        /// Rows submitted, and rows written (or failed), so far: rows are written in the order
        /// they are submitted, so every row before the `n`th is written once `finished >= n`.
        var submitted: UInt64 = 0
        var finished: UInt64 = 0
        /// Callers of ``waitForSubmittedRows()`` and ``submittedRowsWritten()``, each with the
        /// count it waits for and what lets it go on.
        var barriers: [(upTo: UInt64, done: @Sendable () -> Void)] = []
        /// The writer's recent pace: nanoseconds of wall time per row, a moving average over its
        /// batches (0 before the first). Wall time, as that is what rows behind them wait.
        var nanosecondsPerRow: UInt64 = 0
        /// When (uptime nanoseconds) the writer last finished rows, or the backlog last started
        /// from none, whichever came later: a backlog it has not moved for long is stuck.
        var lastProgress: UInt64 = 0

        /// Counts one more row submitted.
        mutating func submitOne() {
            if submitted == finished { lastProgress = DispatchTime.now().uptimeNanoseconds }
            submitted += 1
        }

        /// Counts `count` rows written, in `elapsed` nanoseconds, and takes out the barriers that
        /// waited for them.
        mutating func finish(_ count: Int, in elapsed: UInt64) -> [@Sendable () -> Void] {
            if count > 0 {
                let pace = elapsed / UInt64(count)
                // A quarter for the latest batch: a slow one (a checkpoint's syncs) counts, but
                // does not decide alone.
                nanosecondsPerRow = nanosecondsPerRow == 0 ? pace : nanosecondsPerRow / 4 * 3 + pace / 4
            }
            finished += UInt64(count)
            lastProgress = DispatchTime.now().uptimeNanoseconds
            guard !barriers.isEmpty else { return [] }
            let finished = finished
            let due = barriers.filter { $0.upTo <= finished }.map(\.done)
            barriers.removeAll { $0.upTo <= finished }
            return due
        }
    }

    private let state = Locked(State())
    private let queue: DispatchQueue
    private let moreRows = DispatchSemaphore(value: 0)
    /// How long the writer waits for more rows before it gives its thread back.
    private let linger: DispatchTimeInterval

    /// Called when a linger runs out, before the writer decides whether to stop (tests race a
    /// row against that moment).
    private let lingerRanOut: (@Sendable () -> Void)?

    init(
        label: String, linger: DispatchTimeInterval = .milliseconds(2), lingerRanOut: (@Sendable () -> Void)? = nil
    ) {
        self.queue = DispatchQueue(label: label)
        self.linger = linger
        self.lingerRanOut = lingerRanOut
    }

    /// The most rows one transaction takes; the rest wait for the next. Under a backlog
    /// (misses faster than the index), a transaction of hundreds of rows held every caller
    /// waiting on it for tens of milliseconds and then let them all go at once.
    static var maximumBatch: Int { 64 }

    /// Rows waiting for the next transaction.
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Rows submitted and not yet written (those of the transaction under way included), the
    /// writer's recent pace in nanoseconds per row (0 before its first batch), and how long the
    /// writer has finished none of them (0 when there are none): nanoseconds since its last
    /// transaction ended or since the first of them was submitted, whichever is later.
    var backlog: (rows: UInt64, nanosecondsPerRow: UInt64, nanosecondsStill: UInt64) {
        let (rows, pace, lastProgress) = state.withLock {
            ($0.submitted - $0.finished, $0.nanosecondsPerRow, $0.lastProgress)
        }
        let now = DispatchTime.now().uptimeNanoseconds
        return (rows, pace, rows == 0 || now < lastProgress ? 0 : now - lastProgress)
    }

    /// Batches handed to writers so far.
    var batchesWritten: Int { state.withLock { $0.batchesWritten } }

    /// Times the writer was started on its queue (rather than woken while lingering).
    var writerStarts: Int { state.withLock { $0.writerStarts } }

    /// Whether a writer is writing or lingering.
    var isWriting: Bool { state.withLock { $0.writing } }

    /// Returns once every row submitted before the call is written (or has failed), so that
    /// what the caller does next comes after them in the index: a removal of a URL then also
    /// removes the entry a response stored just before (RFC 9111 §4.4 invalidation after a miss
    /// whose answer was already sent). At once when no row is waiting. Blocks the thread, as a
    /// write to the index does; not for the writer's own queue.
    /// With a `limit`, waits at most that long and returns `false` when the rows were not all
    /// written by then (a stuck disk must not hold the process's exit forever).
    @discardableResult
    func waitForSubmittedRows(atMost limit: DispatchTimeInterval = .never) -> Bool {
        let done = DispatchSemaphore(value: 0)
        guard addBarrier({ done.signal() }) else { return true }
        return done.wait(timeout: limit == .never ? .distantFuture : .now() + limit) == .success
    }

    /// ``waitForSubmittedRows(atMost:)`` that suspends rather than blocks: for a caller on an
    /// event loop or Swift's cooperative pool, whose thread others need meanwhile. With a
    /// `limit`, `false` when the rows were not all written by then.
    @discardableResult
    func submittedRowsWritten(atMost limit: DispatchTimeInterval = .never) async -> Bool {
        await backlogWritten(downTo: 0, atMost: limit)
    }

    /// Returns once no more than `rows` of the rows submitted before the call are still to be
    /// written (at once when no more are): a caller that submits faster than the writer writes
    /// waits for its share of the backlog, not for all of it, and callers waiting so are let go
    /// one transaction at a time (``maximumBatch``) rather than all at once. With a `limit`,
    /// waits at most that long and returns `false` when the backlog was not down to `rows` by
    /// then (a writer held by a stuck disk must not hold its callers).
    @discardableResult
    func backlogWritten(downTo rows: UInt64, atMost limit: DispatchTimeInterval = .never) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            // Resumed once: by the barrier, or by the deadline when it comes first.
            let waiting = Locked<CheckedContinuation<Bool, Never>?>(continuation)
            let resume: @Sendable (Bool) -> Void = { written in
                waiting.withLock { waiting in
                    defer { waiting = nil }
                    return waiting
                }?.resume(returning: written)
            }
            guard addBarrier(leaving: rows, { resume(true) }) else { return resume(true) }
            if limit != .never {
                DispatchQueue.global().asyncAfter(deadline: .now() + limit) { resume(false) }
            }
        }
    }

    /// Registers `done` to run once the rows submitted so far are written, all but the last
    /// `leaving` of them; `false` (and `done` never runs) when they are already.
    private func addBarrier(leaving: UInt64 = 0, _ done: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            let upTo = state.submitted - min(leaving, state.submitted)
            guard state.finished < upTo else { return false }
            state.barriers.append((upTo, done))
            return true
        }
    }

    /// Callers of ``waitForSubmittedRows()`` waiting.
    var waitingBarriers: Int { state.withLock { $0.barriers.count } }

    /// Queues `row`; `completion` runs on the writer's queue once the row is in the index (or
    /// could not be written).
    func submit(_ row: Row, writer: @escaping Writer, completion: @escaping Completion) {
        let wake = state.withLock { state -> WriterWakeUp? in
            state.pending.append((row, completion))
            state.submitOne()
            if state.writerLingering {
                state.writerLingering = false
                return .signal
            }
            guard !state.writing else { return nil }
            state.writing = true
            state.writerStarts += 1
            return .start
        }
        switch wake {
        case .start: queue.async { self.writeUntilEmpty(writer) }
        case .signal: moreRows.signal()
        case nil: break
        }
    }

    private enum WriterWakeUp { case start, signal }

    /// Writes `row` and waits for it: on the caller's thread when no other row is being
    /// written (a lone store pays no hop to the writer's queue), else with the next batch.
    func submitAndWait(_ row: Row, writer: @escaping Writer) throws -> Written {
        let alone = state.withLock { state -> Bool in
            guard !state.writing else { return false }
            state.writing = true
            state.batchesWritten += 1
            state.submitOne()
            return true
        }
        if alone {
            let started = DispatchTime.now().uptimeNanoseconds
            let result = writer([row]).first ?? .failure(StoreError.missingWriterResult)
            let elapsed = DispatchTime.now().uptimeNanoseconds &- started
            // Rows submitted meanwhile found the writer busy: the queue takes them.
            let (more, due) = state.withLock { state -> (Bool, [@Sendable () -> Void]) in
                let due = state.finish(1, in: elapsed)
                if state.pending.isEmpty { state.writing = false }
                return (!state.pending.isEmpty, due)
            }
            for barrier in due { barrier() }
            if more { queue.async { self.writeUntilEmpty(writer) } }
            return try result.get()
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<Written, any Error>?>(nil)
        submit(row, writer: writer) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Writes `row` and resumes the caller once it is in.
    func submit(_ row: Row, writer: @escaping Writer) async throws -> Written {
        try await withCheckedThrowingContinuation { continuation in
            submit(row, writer: writer) { continuation.resume(with: $0) }
        }
    }

    /// Waits up to `linger` for a submitter's signal: `true` when rows came (write them),
    /// `false` when the writer has stopped (the next row starts it again).
    private func waitForMoreRows() -> Bool {
        let signalled = moreRows.wait(timeout: .now() + linger) == .success
        if signalled { return true }
        lingerRanOut?()
        let stopped = state.withLock { state -> Bool in
            // Still lingering: nobody came, and nobody can signal once this is cleared.
            guard state.writerLingering else { return false }
            state.writerLingering = false
            state.writing = false
            return true
        }
        if stopped { return false }
        // A submitter cleared `writerLingering` as the wait ran out: its signal is on the way,
        // and must be taken now so that the next linger does not wake for nothing.
        moreRows.wait()
        return true
    }

    /// Writes batches until no row waits; runs on ``queue`` only, as background work
    /// (``BackgroundWriting``) so that rows arriving from a busy event loop gather into batches.
    private func writeUntilEmpty(_ write: Writer) {
        BackgroundWriting.run { writeBatches(write) }
    }

    private func writeBatches(_ write: Writer) {
        while true {
            let batch = state.withLock { state -> [(row: Row, completion: Completion)] in
                let batch = Array(state.pending.prefix(Self.maximumBatch))
                state.pending.removeFirst(batch.count)
                if batch.isEmpty { state.writerLingering = true } else { state.batchesWritten += 1 }
                return batch
            }
            if batch.isEmpty {
                if waitForMoreRows() { continue }
                return
            }
            let started = DispatchTime.now().uptimeNanoseconds
            let results = write(batch.map(\.row))
            let elapsed = DispatchTime.now().uptimeNanoseconds &- started
            for (index, item) in batch.enumerated() {
                // A writer that returned too few results fails the rest rather than leave them waiting.
                item.completion(index < results.count ? results[index] : .failure(StoreError.missingWriterResult))
            }
            for barrier in state.withLock({ $0.finish(batch.count, in: elapsed) }) { barrier() }
        }
    }
}
