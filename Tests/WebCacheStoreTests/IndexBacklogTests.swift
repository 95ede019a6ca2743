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

@Suite("Keeping pace with the index: a backlog of new entries, let go a transaction at a time")
struct IndexBacklogTests {
    /// A writer that holds every batch until ``step`` is signalled for it, and records the
    /// batches it has finished.
    final class SteppedWriter: Sendable {
        let finished = Locked<[[Int]]>([])
        let entered = DispatchSemaphore(value: 0)
        let step = DispatchSemaphore(value: 0)

        func write(_ rows: [Int]) -> [Result<Int, any Error>] {
            entered.signal()
            // A bound only for a test that never signals; a loaded run can take seconds between.
            _ = step.wait(timeout: .now() + .seconds(60))
            finished.withLock { $0.append(rows) }
            return rows.map { .success($0) }
        }

        /// Returns once a batch is in, held; `false` when none came within ten seconds.
        func batchEntered() async -> Bool {
            await onOwnThread { self.entered.wait(timeout: .now() + .seconds(10)) == .success }
        }

        /// Lets the batch under way finish and returns once the next one is in, held; `false`
        /// when none came.
        func nextBatch() async -> Bool {
            step.signal()
            return await batchEntered()
        }
    }

    /// A commit whose writer holds row 1 in its first batch, with rows 2 through `last` queued
    /// behind it.
    static func heldBacklog(_ label: String, upTo last: Int) async -> (GroupCommit<Int, Int>, SteppedWriter) {
        let commit = GroupCommit<Int, Int>(label: label)
        let writer = SteppedWriter()
        commit.submit(1, writer: { writer.write($0) }) { _ in }
        #expect(await writer.batchEntered())
        for row in 2...last { commit.submit(row, writer: { writer.write($0) }) { _ in } }
        return (commit, writer)
    }

    /// Stores an entry for `url` with a body of `size` bytes without waiting for the index.
    static func storeWithoutWaiting(_ store: CacheStore, _ url: String, size: Int = 100) throws -> Bool {
        let writer = try store.makeWriter(for: Entries.make(url))
        try writer.write(Entries.body(size))
        return try writer.commitWithoutWaiting { _ in }
    }

    @Test(
        "a caller past the backlog is let go once no more than it allows are left, a transaction of at most 64 rows at a time"
    )
    func backlogWrittenDownTo() async throws {
        // The writer holds the first row; the others wait for the transactions after it.
        let (commit, writer) = await Self.heldBacklog("test.backlog", upTo: 151)
        #expect(commit.backlog.rows == 151)
        // Within what the caller allows: at once, the writer held.
        await commit.backlogWritten(downTo: 151)
        let writtenWhenLetGo = Locked<Int?>(nil)
        let waiting = Task {
            await commit.backlogWritten(downTo: 40)
            writtenWhenLetGo.withLock { $0 = writer.finished.withLock { $0.joined().count } }
        }
        // [1] and [2…65] written: 86 left, more than 40.
        #expect(await writer.nextBatch())
        #expect(await writer.nextBatch())
        try await Task.sleep(for: .milliseconds(50))
        #expect(writtenWhenLetGo.withLock { $0 } == nil)
        // [66…129] written: 22 left. The caller goes on while [130…151] is held.
        try #require(await writer.nextBatch())
        await waiting.value
        #expect(writtenWhenLetGo.withLock { $0 } == 129)
        writer.step.signal()
        await commit.submittedRowsWritten()
        #expect(writer.finished.withLock { $0.map(\.count) } == [1, 64, 64, 22])
        #expect(commit.backlog.rows == 0)
    }

    @Test(
        "a wait for the backlog with a limit ends at the limit, false, while the writer is held; true once the writer gets there in time"
    )
    func backlogWrittenAtMost() async throws {
        let (commit, writer) = await Self.heldBacklog("test.backlog.limit", upTo: 10)
        let started = ContinuousClock.now
        #expect(!(await commit.backlogWritten(downTo: 0, atMost: .milliseconds(100))))
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(90) && waited < .seconds(20), "waited \(waited)")
        #expect(commit.backlog.rows == 10)
        // The writer has finished nothing since the first row came.
        #expect(commit.backlog.nanosecondsStill >= 90_000_000)
        // Within its limit: the writer's two transactions come in time.
        let waiting = Task { await commit.backlogWritten(downTo: 0, atMost: .seconds(30)) }
        try #require(await writer.nextBatch())
        writer.step.signal()
        #expect(await waiting.value)
        #expect(commit.backlog.rows == 0)
        #expect(commit.backlog.nanosecondsStill == 0)
        #expect(writer.finished.withLock { $0.map(\.count) } == [1, 9])
    }

    @Test("the writer's pace is its wall time per row, 0 before its first batch")
    func writerPace() async throws {
        let commit = GroupCommit<Int, Int>(label: "test.pace")
        #expect(commit.backlog.nanosecondsPerRow == 0)
        let write: GroupCommit<Int, Int>.Writer = { rows in
            usleep(UInt32(2_000 * rows.count))
            return rows.map { .success($0) }
        }
        for row in 0..<4 { #expect(try await commit.submit(row, writer: write) == row) }
        // A caller hears of its row before the writer counts it written.
        await commit.submittedRowsWritten()
        #expect(commit.backlog.nanosecondsPerRow >= 2_000_000)
        #expect(commit.backlog.rows == 0)
    }

    @Test(
        "entries allowed on their way: 256 for a quick writer or before its first batch, 50 ms of a slow one's work, never under 16; a transaction less after a wait"
    )
    func entriesAllowed() {
        #expect(CacheStore.entriesAllowedOnTheirWay(nanosecondsPerRow: 0) == 256)
        #expect(CacheStore.entriesAllowedOnTheirWay(nanosecondsPerRow: 20_000) == 256)
        #expect(CacheStore.entriesAllowedOnTheirWay(nanosecondsPerRow: 1_000_000) == 50)
        #expect(CacheStore.entriesAllowedOnTheirWay(nanosecondsPerRow: 2_500_000) == 20)
        #expect(CacheStore.entriesAllowedOnTheirWay(nanosecondsPerRow: 10_000_000) == 16)
        #expect(CacheStore.entriesAllowedOnTheirWay(nanosecondsPerRow: .max) == 16)
        // A miss that waited goes on a transaction below what is allowed, or at half of it.
        #expect(CacheStore.resumedBacklog(allowed: 256) == 192)
        #expect(CacheStore.resumedBacklog(allowed: 100) == 50)
        #expect(CacheStore.resumedBacklog(allowed: 16) == 8)
    }

    @Test(
        "a store keeps pace with its index: at once with a few entries on their way, with many once the index is a transaction below what it allows"
    )
    func storeKeepsPace() async throws {
        try await TemporaryDirectory.with { directory in
            let held = CommitWithoutWaitingTests.HeldWriter()
            let store = try CommitWithoutWaitingTests.openStore(directory, held: held)
            func storeEntry(_ index: Int) throws {
                #expect(try Self.storeWithoutWaiting(store, "https://example.com/pace/\(index)"))
            }
            try storeEntry(0)
            await onOwnThread { held.entered.wait() }
            for index in 1..<10 { try storeEntry(index) }
            // Ten on their way, the writer held: no wait.
            #expect(await store.keepPaceWithIndex(atMost: .seconds(60)))
            for index in 10..<300 { try storeEntry(index) }
            let letGo = Locked(false)
            // Patience past how long a loaded run can take to get here: the writer is held, not stuck.
            let waiting = Task {
                #expect(await store.keepPaceWithIndex(atMost: .seconds(60)))
                letGo.withLock { $0 = true }
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(!letGo.withLock { $0 })
            held.release.signal()
            await waiting.value
            // A transaction below what is allowed.
            #expect(store.newRows.backlog.rows <= 192)
            await store.entriesOnTheirWayWritten()
            #expect(try store.statistics().entries == 300)
        }
    }

    @Test(
        "a stuck index holds a store that keeps pace only so long, and past the most entries on their way one stored without waiting is refused, its body file gone; once the index catches up, entries are stored again"
    )
    func stuckIndex() async throws {
        try await TemporaryDirectory.with { directory in
            let held = CommitWithoutWaitingTests.HeldWriter()
            var configuration = CacheStore.Configuration.test(directory)
            configuration.beforeWritingRows = { held.hold($0) }
            configuration.maximumEntriesOnTheirWay = 300
            let store = try CacheStore(configuration: configuration)
            func storeEntry(_ index: Int, size: Int = 100) throws -> Bool {
                try Self.storeWithoutWaiting(store, "https://example.com/stuck/\(index)", size: size)
            }
            #expect(try storeEntry(0))
            await onOwnThread { held.entered.wait() }
            for index in 1..<300 { #expect(try storeEntry(index)) }
            // Past what is allowed on their way, the writer held: the wait ends at its limit, a
            // second past how long the writer has been still (since the first entry came).
            let still = Duration.nanoseconds(Int64(store.newRows.backlog.nanosecondsStill))
            let limit = still + .seconds(2)
            let started = ContinuousClock.now
            #expect(!(await store.keepPaceWithIndex(atMost: limit)))
            let waited = ContinuousClock.now - started
            #expect(waited >= .seconds(1.9) && waited < .seconds(30), "waited \(waited)")
            // The writer has now been still longer than that: the next caller does not wait.
            // (A wait would take the limit, two seconds and more.)
            let again = ContinuousClock.now
            #expect(!(await store.keepPaceWithIndex(atMost: limit)))
            let waitedAgain = ContinuousClock.now - again
            #expect(waitedAgain < .seconds(1), "waited \(waitedAgain)")
            // At the most on their way: refused, in a file (past the test's 1 KB inline limit) or not.
            let filesBefore = bodyFiles(in: directory).count
            for size in [100, 4_000] {
                let error = #expect(throws: StoreError.self) { try storeEntry(300 + size, size: size) }
                #expect(error?.code == .indexBehind)
                #expect(
                    error?.message.contains("300 entries are already waiting") == true, "\(String(describing: error))")
            }
            #expect(bodyFiles(in: directory).count == filesBefore)
            #expect(store.newRows.backlog.rows == 300)
            held.release.signal()
            await store.entriesOnTheirWayWritten()
            #expect(try storeEntry(1_000, size: 4_000))
            await store.entriesOnTheirWayWritten()
            #expect(try store.statistics().entries == 301)
            #expect(try store.lookup(Entries.key("https://example.com/stuck/4300")).isEmpty)
        }
    }

    @Test("the most entries on their way must be at least 1")
    func mostEntriesOnTheirWayValidated() async throws {
        try await TemporaryDirectory.with { directory in
            var configuration = CacheStore.Configuration.test(directory)
            configuration.maximumEntriesOnTheirWay = 0
            let error = #expect(throws: StoreError.self) { try CacheStore(configuration: configuration) }
            #expect(error?.code == .invalidConfiguration)
        }
    }
}
