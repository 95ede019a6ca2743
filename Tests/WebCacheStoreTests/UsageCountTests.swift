import Foundation
import GRDB
import HTTPCaching
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

/// The per-namespace totals capacity checks read: the index writer adds each transaction's new
/// rows at once (not a trigger per row), and a row inserted the way a writer from before that
/// did it is still counted by the trigger.
@Suite("Index totals")
struct UsageCountTests {
    /// Entries and body bytes as the rows themselves add up, and as `usage` has them.
    static func totals(_ directory: URL) throws -> (rows: [Int], usage: [Int]) {
        let queue = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
        return try queue.read { db in
            let rows = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(bodySize), 0) FROM entry")
            let usage = try Row.fetchOne(
                db, sql: "SELECT coalesce(sum(entries), 0), coalesce(sum(bytes), 0) FROM usage")
            return ([rows?[0] ?? -1, rows?[1] ?? -1], [usage?[0] ?? -1, usage?[1] ?? -1])
        }
    }

    @Test("a transaction's rows are counted once, rows of one batch replacing each other included")
    func batchCounted() async throws {
        try await TemporaryDirectory.with { directory in
            let held = CommitWithoutWaitingTests.HeldWriter()
            let store = try CommitWithoutWaitingTests.openStore(directory, held: held)
            // The first row holds the writer, so that the thirty after it gather into one batch in
            // which each of ten URLs is stored three times, each time with another body.
            let first = try store.makeWriter(for: Entries.make("https://example.com/held"))
            try first.write(Entries.body(70))
            _ = try first.commitWithoutWaiting { _ in }
            #expect(held.entered.wait(timeout: .now() + .seconds(30)) == .success)
            for round in 1...3 {
                for index in 0..<10 {
                    let writer = try store.makeWriter(for: Entries.make("https://example.com/u/\(index)"))
                    try writer.write(Entries.body(100 * round + index))
                    _ = try writer.commitWithoutWaiting { _ in }
                }
            }
            held.release.signal()
            await store.entriesOnTheirWayWritten()
            let (rows, usage) = try Self.totals(directory)
            #expect(rows == [11, 70 + (0..<10).map { 300 + $0 }.reduce(0, +)])
            #expect(usage == rows)
            let statistics = try store.statistics()
            #expect([statistics.entries, statistics.diskBytes] == rows)
        }
    }

    @Test("a row inserted without saying it is counted (a writer from before) is counted by the trigger")
    func olderWriterCounted() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            _ = try store.store(Entries.make("https://example.com/new"), body: Entries.body(40))
            let queue = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            try await queue.write { db in
                let namespace = try String.fetchOne(db, sql: "SELECT namespace FROM entry LIMIT 1") ?? ""
                try db.execute(
                    sql: """
                        INSERT INTO entry (namespace, method, url, host, status, requestHeaders, responseHeaders,
                            requestTime, responseTime, lastAccess, bodySize, bodyChecksum, bodyInline)
                        VALUES (?, 'GET', 'https://example.com/old', 'example.com', 200, '', '', 0, 0, 0, 3, 0, x'010203')
                        """, arguments: [namespace])
            }
            let (rows, usage) = try Self.totals(directory)
            #expect(rows == [2, 43])
            #expect(usage == rows)
            // Removing either is counted by the removal trigger, as before.
            try await queue.write { db in
                try db.execute(sql: "DELETE FROM entry WHERE url = 'https://example.com/old'")
            }
            #expect(try Self.totals(directory).usage == [1, 40])
        }
    }
}
