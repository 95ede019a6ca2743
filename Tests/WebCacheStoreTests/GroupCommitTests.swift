import Dispatch
import Foundation
import HTTPCaching
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Group commit: new entries share transactions")
struct GroupCommitTests {
    /// A writer that records each batch, and holds the first one until `release` is signalled.
    final class GatedWriter: Sendable {
        let batches = Locked<[[Int]]>([])
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)

        /// Returns once the first batch is in ``write(_:)``, held. Waits on a thread of its own
        /// (``onOwnThread(_:)``).
        func firstBatchEntered() async {
            await onOwnThread { self.entered.wait() }
        }

        func write(_ rows: [Int]) -> [Result<Int, any Error>] {
            let first = batches.withLock { batches in
                batches.append(rows)
                return batches.count == 1
            }
            if first {
                entered.signal()
                release.wait()
            }
            return rows.map { $0 < 0 ? .failure(StoreError(.databaseFailure, "row \($0) refused")) : .success($0 * 10) }
        }
    }

    @Test(
        "rows that arrive while a transaction is under way go into the next one together, each caller gets its own result"
    )
    func rowsArrivingDuringATransactionShareTheNext() async throws {
        let commit = GroupCommit<Int, Int>(label: "test.group-commit")
        let writer = GatedWriter()
        let first = Task { try await commit.submit(1) { writer.write($0) } }
        await writer.firstBatchEntered()
        let waiting = (2...41).map { row in Task { try await commit.submit(row) { writer.write($0) } } }
        // Every one of them is queued before the first transaction ends.
        for _ in 0..<200 where commit.pendingCount < waiting.count {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(commit.pendingCount == waiting.count)
        writer.release.signal()
        #expect(try await first.value == 10)
        for (index, task) in waiting.enumerated() {
            #expect(try await task.value == (index + 2) * 10)
        }
        let batches = writer.batches.withLock { $0 }
        #expect(batches.count == 2)
        #expect(batches.first == [1])
        #expect(batches.last?.sorted() == Array(2...41))
    }

    @Test(
        "a barrier, blocking or suspending, returns once every row submitted before it is written, and at once when none waits"
    )
    func barrierWaitsForSubmittedRows() async throws {
        let commit = GroupCommit<Int, Int>(label: "test.group-commit")
        commit.waitForSubmittedRows()
        let writer = GatedWriter()
        let first = Task { try await commit.submit(1) { writer.write($0) } }
        await writer.firstBatchEntered()
        let second = Task { try await commit.submit(2) { writer.write($0) } }
        for _ in 0..<200 where commit.pendingCount < 1 {
            try await Task.sleep(for: .milliseconds(5))
        }
        // What the writer had written when the barrier let its caller go.
        let seen = Locked<[[Int]]?>(nil)
        // On a thread of its own (onOwnThread).
        let barrier = Task {
            await onOwnThread {
                commit.waitForSubmittedRows()
                seen.withLock { $0 = writer.batches.withLock { $0 } }
            }
        }
        // And one that suspends instead.
        let seenSuspended = Locked<[[Int]]?>(nil)
        let suspended = Task {
            await commit.submittedRowsWritten()
            seenSuspended.withLock { $0 = writer.batches.withLock { $0 } }
        }
        for _ in 0..<200 where commit.waitingBarriers < 2 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(commit.waitingBarriers == 2)
        #expect(seen.withLock { $0 } == nil && seenSuspended.withLock { $0 } == nil)
        writer.release.signal()
        await barrier.value
        await suspended.value
        #expect(seen.withLock { $0 } == [[1], [2]])
        #expect(seenSuspended.withLock { $0 } == [[1], [2]])
        #expect(try await first.value == 10)
        #expect(try await second.value == 20)
        #expect(commit.waitingBarriers == 0)
        commit.waitForSubmittedRows()
        await commit.submittedRowsWritten()
    }

    @Test("a row the writer refuses fails its own caller only; a blocking caller gets the same")
    func aRefusedRowFailsOnlyItsCaller() async throws {
        let commit = GroupCommit<Int, Int>(label: "test.group-commit")
        let writer = GatedWriter()
        writer.release.signal()
        async let good = commit.submit(3) { writer.write($0) }
        let bad = Task { try commit.submitAndWait(-1) { writer.write($0) } }
        #expect(try await good == 30)
        let refused = await bad.result
        #expect(throws: StoreError.self) { try refused.get() }
        #expect(try commit.submitAndWait(4) { writer.write($0) } == 40)
    }

    @Test("a blocking caller alone writes on its own thread; rows that come meanwhile go to the queue after it")
    func aLoneBlockingCallerWritesItself() async throws {
        let commit = GroupCommit<Int, Int>(label: "test.group-commit")
        let writer = GatedWriter()
        let threads = Locked<[pthread_t]>([])
        let write: GroupCommit<Int, Int>.Writer = { rows in
            threads.withLock { $0.append(pthread_self()) }
            return writer.write(rows)
        }
        let caller = Locked<pthread_t?>(nil)
        let lone = Task.detached {
            caller.withLock { $0 = pthread_self() }
            return try commit.submitAndWait(5, writer: write)
        }
        await writer.firstBatchEntered()
        let queued = Task { try await commit.submit(6, writer: write) }
        for _ in 0..<200 where commit.pendingCount < 1 {
            try await Task.sleep(for: .milliseconds(5))
        }
        writer.release.signal()
        #expect(try await lone.value == 50)
        #expect(try await queued.value == 60)
        let written = threads.withLock { $0 }
        #expect(written.count == 2)
        #expect(written.first.map { pthread_equal($0, caller.withLock { $0! }) != 0 } == true)
        #expect(writer.batches.withLock { $0 } == [[5], [6]])
    }

    @Test("a row that comes while the writer lingers wakes it: one start for rows a moment apart")
    func aLingeringWriterIsWokenForTheNextRow() async throws {
        let commit = GroupCommit<Int, Int>(label: "test.group-commit", linger: .seconds(30))
        let writer = GatedWriter()
        writer.release.signal()
        #expect(try await commit.submit(1) { writer.write($0) } == 10)
        #expect(commit.isWriting)  // lingering
        #expect(try await commit.submit(2) { writer.write($0) } == 20)
        #expect(commit.writerStarts == 1)
        #expect(writer.batches.withLock { $0 } == [[1], [2]])
    }

    @Test("after its linger the writer stops, and the next row starts it again")
    func theWriterStopsAfterItsLinger() async throws {
        let commit = GroupCommit<Int, Int>(label: "test.group-commit", linger: .milliseconds(1))
        let writer = GatedWriter()
        writer.release.signal()
        #expect(try await commit.submit(1) { writer.write($0) } == 10)
        for _ in 0..<400 where commit.isWriting {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(!commit.isWriting)
        #expect(try await commit.submit(2) { writer.write($0) } == 20)
        #expect(commit.writerStarts == 2)
    }

    @Test("a row that comes just as the linger runs out is written by that writer, not left waiting")
    func aRowAtTheEndOfTheLinger() async throws {
        let writer = GatedWriter()
        writer.release.signal()
        let late = DispatchSemaphore(value: 0)
        let lateResult = Locked<Int?>(nil)
        let once = Locked(false)
        let commit = Locked<GroupCommit<Int, Int>?>(nil)
        let made = GroupCommit<Int, Int>(label: "test.group-commit", linger: .milliseconds(1)) {
            let first = once.withLock { fired -> Bool in
                defer { fired = true }
                return !fired
            }
            guard first else { return }
            // Between the wait running out and the writer deciding to stop.
            commit.withLock { $0 }?.submit(2, writer: { writer.write($0) }) { result in
                lateResult.withLock { $0 = try? result.get() }
                late.signal()
            }
        }
        commit.withLock { $0 = made }
        #expect(try await made.submit(1) { writer.write($0) } == 10)
        let answered = await onOwnThread { late.wait(timeout: .now() + 10) == .success }
        #expect(answered)
        #expect(lateResult.withLock { $0 } == 20)
        #expect(made.writerStarts == 1)
    }

    @Test(
        "rows from many threads around the end of the writer's linger: each written once, each caller answered once",
        .timeLimit(.minutes(1)))
    func rowsRacingTheEndOfTheLinger() async throws {
        let commit = GroupCommit<Int, Int>(label: "test.group-commit", linger: .microseconds(50))
        let written = Locked<[Int]>([])
        let write: GroupCommit<Int, Int>.Writer = { rows in
            written.withLock { $0 += rows }
            return rows.map { .success($0 + 1) }
        }
        let answers = Locked<[Int: Int]>([:])
        let threads = 8
        let rowsEach = 400
        let done = DispatchGroup()
        for thread in 0..<threads {
            DispatchQueue.global().async(group: done) {
                var generator = SystemRandomNumberGenerator()
                for index in 0..<rowsEach {
                    let row = thread * rowsEach + index
                    // Pauses on both sides of the linger, so that rows meet a writer that is
                    // writing, lingering, just giving up, or stopped.
                    if Bool.random(using: &generator) { usleep(UInt32.random(in: 0...120, using: &generator)) }
                    let answered = DispatchSemaphore(value: 0)
                    commit.submit(row, writer: write) { result in
                        answers.withLock { $0[row, default: 0] += (try? result.get()) == row + 1 ? 1 : 1000 }
                        answered.signal()
                    }
                    if index % 8 == 0 { answered.wait() }
                }
            }
        }
        await withCheckedContinuation { continuation in
            done.notify(queue: .global()) { continuation.resume() }
        }
        for _ in 0..<400 where answers.withLock({ $0.count }) < threads * rowsEach || commit.isWriting {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(written.withLock { $0.sorted() } == Array(0..<threads * rowsEach))
        #expect(answers.withLock { $0.values.allSatisfy { $0 == 1 } && $0.count == threads * rowsEach })
        #expect(!commit.isWriting)
        #expect(commit.batchesWritten < threads * rowsEach)
    }

    @Test(
        "many misses stored at once: every entry is in the index under its own id, in fewer transactions than entries")
    func manyConcurrentCommits() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let urls = (0..<300).map { "https://example.com/g/\($0)" }
            let entries = try await withThrowingTaskGroup(of: CacheEntry?.self) { group in
                for (index, url) in urls.enumerated() {
                    group.addTask {
                        let writer = try store.makeWriter(for: Entries.make(url))
                        // Every third body goes to a file, the rest inline.
                        try writer.write(Entries.body(index % 3 == 0 ? 40_000 : 500, seed: UInt8(index % 200)))
                        return try await writer.commitWithoutBlocking()
                    }
                }
                return try await group.reduce(into: [CacheEntry]()) { if let entry = $1 { $0.append(entry) } }
            }
            #expect(entries.count == urls.count)
            #expect(Set(entries.map(\.id)).count == urls.count)
            for (index, url) in urls.enumerated() {
                let found = try store.lookupInIndex(Entries.key(url))
                #expect(found.count == 1)
                #expect(
                    try found.first.map(store.readBody)
                        == Entries.body(index % 3 == 0 ? 40_000 : 500, seed: UInt8(index % 200)))
            }
            #expect(store.newRows.batchesWritten < urls.count)
        }
    }

    @Test("a row the index refuses inside a batch fails alone: the others in its transaction are stored")
    func aRefusedRowInABatch() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let now = Date()
            func row(_ url: String, body: Data?) -> EntryRow {
                var row = store.makeRow(
                    Entries.make(url), key: Entries.key(url), varyKey: "", body: .data(Data("x".utf8)), size: 1,
                    now: now)
                row.bodyInline = body  // nil breaks the schema's "a body inline or in a file"
                return row
            }
            let results = store.writeRows([
                row("https://example.com/a", body: Data("x".utf8)), row("https://example.com/broken", body: nil),
                row("https://example.com/b", body: Data("x".utf8)),
            ])
            #expect(results.count == 3)
            #expect((try? results[0].get()) != nil)
            #expect(throws: StoreError.self) { try results[1].get() }
            #expect((try? results[2].get()) != nil)
            #expect(try store.lookup(Entries.key("https://example.com/a")).count == 1)
            #expect(try store.lookup(Entries.key("https://example.com/b")).count == 1)
            #expect(try store.lookup(Entries.key("https://example.com/broken")).isEmpty)
        }
    }
}
