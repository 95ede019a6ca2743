import Dispatch
import HTTPCaching

/// One writer for the index's new rows: rows that arrive while a transaction is under way wait
/// and go into the next one together, so that a hundred misses stored at once cost a few
/// transactions, not a hundred (each one a lock, a journal append and an eviction check).
///
/// The writer runs on a queue of its own: a caller on an event loop is resumed when its row is
/// in, and reads (hits) never wait for it — the index is in WAL mode. A row that fails alone
/// (rather than the whole transaction) fails only its own caller: the writer decides that.
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
        var batchesWritten = 0
    }

    private let state = Locked(State())
    private let queue: DispatchQueue

    init(label: String) {
        self.queue = DispatchQueue(label: label)
    }

    /// Rows waiting for the next transaction.
    var pendingCount: Int { state.withLock { $0.pending.count } }

    /// Batches handed to writers so far.
    var batchesWritten: Int { state.withLock { $0.batchesWritten } }

    /// Queues `row`; `completion` runs on the writer's queue once the row is in the index (or
    /// could not be written).
    func submit(_ row: Row, writer: @escaping Writer, completion: @escaping Completion) {
        let startWriter = state.withLock { state -> Bool in
            state.pending.append((row, completion))
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        if startWriter {
            queue.async { self.writeUntilEmpty(writer) }
        }
    }

    /// Writes `row` and waits for it: on the caller's thread when no other row is being
    /// written (a lone store pays no hop to the writer's queue), else with the next batch.
    func submitAndWait(_ row: Row, writer: @escaping Writer) throws -> Written {
        let alone = state.withLock { state -> Bool in
            guard !state.writing else { return false }
            state.writing = true
            state.batchesWritten += 1
            return true
        }
        if alone {
            let result = writer([row]).first ?? .failure(Self.missingResult)
            // Rows submitted meanwhile found the writer busy: the queue takes them.
            let more = state.withLock { state -> Bool in
                if state.pending.isEmpty { state.writing = false }
                return !state.pending.isEmpty
            }
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

    private static var missingResult: StoreError {
        StoreError(.databaseFailure, "the index writer returned no result for an entry")
    }

    /// Writes batches until no row waits; runs on ``queue`` only.
    private func writeUntilEmpty(_ write: Writer) {
        while true {
            let batch = state.withLock { state -> [(row: Row, completion: Completion)] in
                let batch = state.pending
                state.pending.removeAll(keepingCapacity: true)
                if batch.isEmpty { state.writing = false } else { state.batchesWritten += 1 }
                return batch
            }
            guard !batch.isEmpty else { return }
            let results = write(batch.map(\.row))
            for (index, item) in batch.enumerated() {
                // A writer that returned too few results fails the rest rather than leave them waiting.
                item.completion(index < results.count ? results[index] : .failure(Self.missingResult))
            }
        }
    }
}
