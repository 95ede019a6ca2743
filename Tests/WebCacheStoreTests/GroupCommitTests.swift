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
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                writer.entered.wait()
                continuation.resume()
            }
        }
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
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                writer.entered.wait()
                continuation.resume()
            }
        }
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
