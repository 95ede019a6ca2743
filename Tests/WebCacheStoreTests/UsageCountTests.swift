import Foundation
import GRDB
import HTTPCaching
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

/// The per-namespace totals capacity checks read: the index writer adds each transaction's new
/// rows at once, and this process takes removed rows out itself, as its connections run without
/// triggers (``UsageAccounting``); a row inserted or removed by another connection, which has
/// them (a writer from before, say), is still counted by the triggers.
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

    /// Inserts `https://example.com/old` (3 bytes) on a connection of its own, with triggers, in
    /// the namespace of the row already there and without `countedByWriter`, as a writer from
    /// before v6 did; returns that connection.
    static func insertAsAnOlderWriter(in directory: URL) async throws -> DatabaseQueue {
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
        return queue
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
            let queue = try await Self.insertAsAnOlderWriter(in: directory)
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

    @Test(
        "removals of every kind take their rows out of the totals: replaced, past the variant limit, removed, evicted, recovered"
    )
    func removalsCounted() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            var configuration = CacheStore.Configuration.test(directory, clock: clock, memory: 0, disk: 60_000)
            configuration.maximumVariants = 2
            func expectExact(_ step: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
                let (rows, usage) = try Self.totals(directory)
                #expect(usage == rows, "\(step)", sourceLocation: sourceLocation)
            }
            let before: (rows: [Int], usage: [Int])
            do {
                let store = try CacheStore(configuration: configuration)
                for index in 0..<6 {
                    clock.advance(1)
                    // Inline bodies and bodies in files alike.
                    try store.store(
                        Entries.make("https://a.example/\(index)"),
                        body: Entries.body(index.isMultiple(of: 2) ? 500 : 5_000))
                }
                try expectExact("stored")
                try store.store(Entries.make("https://a.example/0"), body: Entries.body(3_000))
                try expectExact("a variant replaced by a larger one")
                for language in ["de", "fr", "it"] {
                    clock.advance(1)
                    try store.store(
                        Entries.make(
                            "https://a.example/page", vary: ["Accept-Language"],
                            request: ["Accept-Language: \(language)"]),
                        body: Entries.body(700))
                }
                #expect(try store.lookup(Entries.key("https://a.example/page")).count == 2)
                try expectExact("the least recently used variant past the limit removed")
                #expect(try store.remove(url: URL(string: "https://a.example/page")!) == 2)
                try expectExact("a URL's variants removed")
                for index in 0..<3 {
                    try store.store(Entries.make("https://c.example/\(index)"), body: Entries.body(2_000))
                }
                #expect(try store.remove(host: "c.example") == 3)
                try expectExact("a host removed")
                // 72,000 bytes more for a capacity of 60,000: each transaction evicts what the
                // capacity no longer holds, the oldest first.
                for index in 0..<12 {
                    clock.advance(1)
                    try store.store(Entries.make("https://b.example/\(index)"), body: Entries.body(6_000))
                }
                try store.trim()
                #expect(try store.lookup(Entries.key("https://a.example/1")).isEmpty)
                try expectExact("evicted down to the capacity")
                before = try Self.totals(directory)
                #expect(before.rows[0] > 0)
                // A body file gone behind the store's back: the next process alone in the directory
                // removes its row when it opens the index.
                let file = try #require(bodyFilesInUse(in: directory, besides: store).first)
                try FileManager.default.removeItem(at: file)
            }
            let reopened = try CacheStore(configuration: configuration)
            let after = try Self.totals(directory)
            #expect(after.rows[0] == before.rows[0] - 1)
            try expectExact("a row without its body file removed by recovery")
            #expect(try reopened.removeAll() == after.rows[0])
            #expect(try Self.totals(directory).usage == [0, 0])
        }
    }

    @Test("this process removes an older writer's row, and an older writer removes this one's: both counted once")
    func removalsAcrossWriters() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            try store.store(Entries.make("https://example.com/new"), body: Entries.body(40))
            let queue = try await Self.insertAsAnOlderWriter(in: directory)
            #expect(try Self.totals(directory).usage == [2, 43])
            #expect(try store.remove(url: URL(string: "https://example.com/old")!) == 1)
            #expect(try Self.totals(directory).usage == [1, 40])
            try await queue.write { db in try db.execute(sql: "DELETE FROM entry") }
            #expect(try Self.totals(directory).usage == [0, 0])
        }
    }

    @Test("a page manifest's members go with it, as foreign keys' actions are not triggers")
    func manifestMembersCascade() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            try store.store(Entries.make("https://example.com/page"), body: Entries.body(10))
            try store.save(
                PageManifest(
                    name: "page", resources: [URL(string: "https://example.com/page")!], isComplete: true,
                    createdAt: Date(timeIntervalSince1970: 1_800_000_000)))
            try store.removeAll()
            let queue = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM manifestMember") } == 0)
        }
    }
}
