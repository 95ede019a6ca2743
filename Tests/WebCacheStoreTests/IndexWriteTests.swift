import Foundation
import GRDB
import HTTPCaching
import Testing
import WebCacheStore
import WebCacheTestSupport

/// New rows are bound and stepped through SQLite's C interface (`SQLiteBinding`), not GRDB's
/// arguments: these tests read what landed with SQLite's own view of each column, so that a
/// value bound with the wrong type (text as a blob, a double as text, an empty body as NULL)
/// fails here rather than in a later reader.
@Suite("Index writes")
struct IndexWriteTests {
    @Test("each column lands with the type and value GRDB's own encoding gave it")
    func columnTypes() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let url = "https://exämple.com/write/types?q=日本語&long=" + String(repeating: "x", count: 300)
            var entry = Entries.make(
                url, vary: ["Accept-Language"], request: ["Accept-Language: fr"],
                headers: ["Cache-Control: max-age=60", "X-Note: café"], group: "g",
                discardAfter: Date(timeIntervalSince1970: 1_800_000_000.25))
            entry.appExpiry = Date(timeIntervalSince1970: 1_800_000_100.5)
            let inline = try #require(try store.store(entry, body: Entries.body(100)))
            let file = try #require(
                try store.store(Entries.make("https://example.com/write/file"), body: Entries.body(5000)))
            let queue = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            let types = try queue.read { db in
                try Row.fetchOne(
                    db,
                    sql: """
                        SELECT typeof(namespace), typeof(method), typeof(url), typeof(host), typeof(varyKey),
                            typeof(status), typeof(requestHeaders), typeof(responseHeaders), typeof(requestTime),
                            typeof(lastAccess), typeof(bodySize), typeof(bodyChecksum), typeof(bodyFile),
                            typeof(bodyInline), typeof(appExpiry), typeof(discardAfter), typeof(groupName),
                            typeof(pinned), url, host, appExpiry, discardAfter, groupName, pinned
                        FROM entry WHERE id = ?
                        """, arguments: [inline.id])
            }
            let row = try #require(types)
            #expect(
                (0..<18).map { row[$0] as String } == [
                    "text", "text", "text", "text", "text", "integer", "text", "text", "real", "real", "integer",
                    "integer", "null", "blob", "real", "real", "text", "integer",
                ])
            #expect(row["url"] as String == inline.key.url)
            #expect(row["host"] as String == inline.key.host)
            #expect(row["appExpiry"] as Double == 1_800_000_100.5)
            #expect(row["discardAfter"] as Double == 1_800_000_000.25)
            #expect(row["groupName"] as String == "g")
            #expect(row["pinned"] as Int == 0)
            let fileColumns = try queue.read { db in
                try Row.fetchOne(
                    db, sql: "SELECT typeof(bodyFile), typeof(bodyInline), typeof(groupName) FROM entry WHERE id = ?",
                    arguments: [file.id])
            }
            #expect(fileColumns.map { [$0[0], $0[1], $0[2]] as [String] } == ["text", "null", "null"])
            let read = try #require(try store.lookup(inline.key).first)
            #expect(read.stored == inline.stored)
            #expect(read.appExpiry == entry.appExpiry)
            #expect(try store.readBody(read) == Entries.body(100))
        }
    }

    @Test("an empty body is stored as a zero-length blob, never NULL, and reads back empty")
    func emptyBody() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let stored = try #require(try store.store(Entries.make("https://example.com/write/empty"), body: Data()))
            let queue = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            let type = try queue.read { db in
                try String.fetchOne(
                    db, sql: "SELECT typeof(bodyInline) FROM entry WHERE id = ?", arguments: [stored.id])
            }
            #expect(type == "blob")
            let read = try #require(try store.lookup(stored.key).first)
            #expect(read.bodySize == 0)
            #expect(try store.readBody(read).isEmpty)
        }
    }

    @Test("a new row replaces the stored one of the same variant, whose body file goes, and leaves other variants")
    func replacesSameVariant() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let url = "https://example.com/write/replace"
            func variant(_ language: String) -> NewEntry {
                Entries.make(url, vary: ["Accept-Language"], request: ["Accept-Language: \(language)"])
            }
            let first = try #require(try store.store(variant("en"), body: Entries.body(5000, seed: 1)))
            let other = try #require(try store.store(variant("fr"), body: Entries.body(10, seed: 2)))
            let second = try #require(try store.store(variant("en"), body: Entries.body(20, seed: 3)))
            #expect(second.id != first.id)
            let found = try store.lookup(Entries.key(url)).sorted { $0.id < $1.id }
            #expect(found.map(\.id) == [other.id, second.id])
            #expect(try store.readBody(found[1]) == Entries.body(20, seed: 3))
            // Both remaining variants are inline: the replaced entry's file is the only one there was.
            #expect(bodyFilesInUse(in: directory, besides: store).isEmpty, "the replaced entry's body file is removed")
        }
    }

    @Test(
        "past maximumVariants of one URL, storing another removes the least recently used unpinned variant, its body file too"
    )
    func variantCap() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            var configuration = CacheStore.Configuration.test(directory, clock: clock, memory: 0)
            configuration.maximumVariants = 3
            let store = try CacheStore(configuration: configuration)
            let url = "https://example.com/write/variants"
            func variant(_ agent: String, pinned: Bool = false) -> NewEntry {
                Entries.make(url, vary: ["User-Agent"], request: ["User-Agent: \(agent)"], pinned: pinned)
            }
            func agents() throws -> [String] {
                try store.lookup(Entries.key(url)).compactMap { $0.stored.request.headerFields[.userAgent] }.sorted()
            }
            try store.store(variant("pinned", pinned: true), body: Entries.body(10))
            for agent in ["a", "b", "c"] {
                clock.advance(60)
                try store.store(variant(agent), body: Entries.body(5000))
            }
            #expect(try agents() == ["a", "b", "c", "pinned"], "a pinned variant is not counted")
            // "a" is used again: "b" is now the least recently used.
            clock.advance(60)
            let a = try #require(
                try store.lookup(Entries.key(url)).first { $0.stored.request.headerFields[.userAgent] == "a" })
            store.recordAccess(a, at: clock.now)
            clock.advance(60)
            try store.store(variant("d"), body: Entries.body(5000))
            #expect(try agents() == ["a", "c", "d", "pinned"])
            // Replacing a variant that is kept removes nothing else.
            clock.advance(60)
            try store.store(variant("c"), body: Entries.body(5000))
            #expect(try agents() == ["a", "c", "d", "pinned"])
            #expect(
                bodyFilesInUse(in: directory, besides: store).count == 3,
                "the removed variants' body files go with them")
            #expect(try store.statistics().entries == 4)
        }
    }

    @Test("maximumVariants below 1 is refused")
    func variantCapValidated() async throws {
        try await TemporaryDirectory.with { directory in
            var configuration = CacheStore.Configuration.test(directory)
            configuration.maximumVariants = 0
            #expect(throws: StoreError.self) { try CacheStore(configuration: configuration) }
        }
    }
}
