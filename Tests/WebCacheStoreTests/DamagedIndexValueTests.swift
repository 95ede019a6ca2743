import Foundation
import GRDB
import Testing
import WebCacheStore
import WebCacheTestSupport

/// Values of the wrong sign or type in an index that another program (or a damaged disk) wrote:
/// SQLite keeps a column's declared type only as an affinity, so a `bodySize` may hold text, a
/// real or a negative number, and a `bodyFile` a blob. Each is left out or refused with an error,
/// never a crash; each of these trapped before.
@Suite("Index values of the wrong sign or type")
struct DamagedIndexValueTests {
    /// Runs `statements` on the index with SQLite's `CHECK` constraints off, as another program may.
    static func damage(_ directory: URL, _ statements: String...) throws {
        let other = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
        try other.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            for statement in statements { try db.execute(sql: statement) }
        }
    }

    @Test("a body size below zero, or unlike the inline body's, makes a row unreadable: left out, never served")
    func bodySizes() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let urls = (0..<4).map { "https://example.com/sizes/\($0)" }
            for url in urls { try store.store(Entries.make(url), body: Entries.body(10)) }
            try store.store(Entries.make("https://example.com/sizes/file"), body: Entries.body(50_000))
            try Self.damage(
                directory, "UPDATE entry SET bodySize = -1 WHERE url = '\(urls[0])'",
                "UPDATE entry SET bodySize = 11 WHERE url = '\(urls[1])'",
                "UPDATE entry SET bodySize = 'ten' WHERE url = '\(urls[2])'",
                "UPDATE entry SET bodySize = -5 WHERE url = 'https://example.com/sizes/file'")
            // A listing reads no inline bodies, so it leaves out the sizes below zero only.
            #expect(try store.entries().map(\.key.url).sorted() == Array(urls[1...3]))
            for url in urls.prefix(3) + ["https://example.com/sizes/file"] {
                #expect(try store.lookup(Entries.key(url)).isEmpty)
            }
            // Unreadable rows found by a lookup are removed.
            #expect(try store.entries().map(\.key.url) == [urls[3]])
            let entry = try #require(try store.lookup(Entries.key(urls[3])).first)
            #expect(try store.readBody(entry, range: 2..<5) == Entries.body(10).subdata(in: 2..<5))
        }
    }

    @Test("a body file name that is a blob, not text, neither stops the store from opening nor is read")
    func blobBodyFileName() async throws {
        try await TemporaryDirectory.with { directory in
            do {
                let store = try CacheStore(configuration: .test(directory, memory: 0))
                for index in 0..<2 {
                    try store.store(Entries.make("https://example.com/blob/\(index)"), body: Entries.body(50_000))
                }
            }
            try Self.damage(directory, "UPDATE entry SET bodyFile = X'FF00FE' WHERE url = 'https://example.com/blob/0'")
            // Opening sweeps the directory against the rows; the row whose name is no text names
            // no file, so it goes as a row whose body is missing.
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            #expect(try store.entries().map(\.key.url) == ["https://example.com/blob/1"])
            #expect(try store.lookup(Entries.key("https://example.com/blob/0")).isEmpty)
            #expect(try store.statistics().entries == 1)
        }
    }

    @Test("statistics, counters, manifests and unreachable origins of the wrong type fail with a StoreError")
    func summaries() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            try store.store(Entries.make("https://example.com/summary"), body: Entries.body(10))
            try store.addToCounters(["hits": 3])
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            try store.saveOriginStatus(
                OriginStatus(
                    origin: "https://example.com", failures: 2, unreachableSince: now, retryAfter: now,
                    lastError: "refused"))
            try store.save(
                PageManifest(
                    name: "page", resources: [URL(string: "https://example.com/summary")!], isComplete: true,
                    createdAt: now))
            try Self.damage(
                directory, "UPDATE entry SET bodySize = 1e300", "UPDATE usage SET bytes = 'many'",
                "UPDATE counter SET value = 1e300", "UPDATE originStatus SET failures = 'x', retryAfter = X'00'",
                "UPDATE manifestMember SET url = X'FF'")
            for (name, read) in [
                ("statistics", { _ = try store.statistics() }), ("counters", { _ = try store.counters() }),
                ("origins", { _ = try store.originStatuses() }), ("manifests", { _ = try store.manifests() }),
            ] as [(String, () throws -> Void)] {
                #expect(throws: StoreError.self, "\(name)") { try read() }
            }
        }
    }

    @Test("eviction counts a size of 1e300 read back from a damaged row without overflow, and goes on storing")
    func evictionOfHugeSizes() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            let store = try CacheStore(configuration: .test(directory, clock: clock, memory: 0, disk: 10_000))
            for index in 0..<4 {
                clock.advance(1)
                try store.store(Entries.make("https://example.com/evict/\(index)"), body: Entries.body(1000))
            }
            // The second oldest reads back as Int.max: counted after the oldest's 1,000 bytes, it
            // overflowed the sum of what eviction freed.
            try Self.damage(directory, "UPDATE entry SET bodySize = 1e300 WHERE url = 'https://example.com/evict/1'")
            clock.advance(1)
            try store.store(Entries.make("https://example.com/evict/new"), body: Entries.body(1000))
            try store.trim()
            #expect(try store.entries().map(\.key.url).contains("https://example.com/evict/new"))
            #expect(try store.lookup(Entries.key("https://example.com/evict/1")).isEmpty)
        }
    }
}
