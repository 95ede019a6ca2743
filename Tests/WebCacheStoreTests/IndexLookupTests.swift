import Foundation
import GRDB
import HTTPCaching
import Testing
import WebCacheStore
import WebCacheTestSupport

/// Lookups the memory tier cannot answer read the index on connections of their own
/// (`EntryLookup`, SQLite's C interface); these tests turn the tier off so every lookup does.
@Suite("Index lookups")
struct IndexLookupTests {
    @Test("every column comes back as stored: variants, group, pin, discard time, inline and file bodies")
    func columns() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let url = "https://example.com/lookup/columns?q=é"
            let discard = Date(timeIntervalSince1970: 1_800_000_000.5)
            var stored: [CacheEntry] = []
            for (language, size) in [("en", 100), ("fr", 200_000)] {
                let entry = Entries.make(
                    url, vary: ["Accept-Language"], request: ["Accept-Language: \(language)"],
                    headers: ["Cache-Control: max-age=60", "ETag: \"\(language)\"", "X-Empty: "],
                    group: "page-\(language)", pinned: language == "fr", discardAfter: discard)
                stored.append(try #require(try store.store(entry, body: Entries.body(size))))
            }
            let found = try store.lookup(Entries.key(url)).sorted { $0.bodySize < $1.bodySize }
            #expect(found.count == 2)
            for (read, written) in zip(found, stored) {
                #expect(read.id == written.id)
                #expect(read.key == written.key)
                #expect(read.varyKey == written.varyKey)
                #expect(read.stored == written.stored)
                #expect(read.bodySize == written.bodySize)
                #expect(read.group == written.group)
                #expect(read.isPinned == written.isPinned)
                #expect(read.discardAfter == discard)
                #expect(read.appExpiry == nil)
                #expect(try store.readBody(read) == Entries.body(written.bodySize))
            }
            #expect(try store.lookup(Entries.key("https://example.com/lookup/absent")).isEmpty)
        }
    }

    @Test("lookups from many tasks at once each find their own rows, while entries are written")
    func parallel() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let urls = (0..<64).map { "https://example.com/lookup/parallel/\($0)" }
            for url in urls { try store.store(Entries.make(url), body: Data(url.utf8)) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<32 {
                    group.addTask {
                        for round in 0..<50 {
                            let url = urls[(task * 13 + round) % urls.count]
                            let entries = try store.lookup(Entries.key(url))
                            #expect(entries.count == 1)
                            #expect(try entries.first.map(store.readBody) == Data(url.utf8))
                        }
                    }
                }
                group.addTask {
                    for index in 0..<50 {
                        try store.store(Entries.make("https://example.com/lookup/new/\(index)"), body: Entries.body(10))
                    }
                }
                try await group.waitForAll()
            }
            #expect(try store.lookup(Entries.key("https://example.com/lookup/new/49")).count == 1)
        }
    }

    @Test("a damaged row (a URL that is no absolute URL, a status out of range) is left out, never a crash")
    func damagedURL() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            for index in 0..<7 {
                try store.store(Entries.make("https://example.com/lookup/damaged/\(index)"), body: Entries.body(10))
            }
            let other = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            try other.write { db in
                for (index, damaged) in ["not a url", "/relative", "mailto:someone", ""].enumerated() {
                    try db.execute(
                        sql: "UPDATE entry SET url = ? WHERE url = ?",
                        arguments: [damaged, "https://example.com/lookup/damaged/\(index)"])
                }
            }
            try other.writeWithoutTransaction { db in
                // The schema checks statuses; a file edited without that check may still hold any.
                try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
                for (index, status) in [(5, 5000), (6, -1)] {
                    try db.execute(
                        sql: "UPDATE entry SET status = ? WHERE url = ?",
                        arguments: [status, "https://example.com/lookup/damaged/\(index)"])
                }
            }
            #expect(try store.entries().map(\.key.url) == ["https://example.com/lookup/damaged/4"])
            #expect(try store.lookup(Entries.key("https://example.com/lookup/damaged/5")).isEmpty)
            #expect(try store.lookup(Entries.key("https://example.com/lookup/damaged/4")).count == 1)
        }
    }

    @Test("a body file name from a damaged index that points outside the store is neither read nor deleted")
    func bodyFileOutside() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let victim = directory.appendingPathComponent("victim.txt")
            try Data(repeating: 7, count: 5_000).write(to: victim)
            let urls = ["https://example.com/outside/a", "https://example.com/outside/b"]
            for url in urls { try store.store(Entries.make(url), body: Entries.body(5_000)) }
            let other = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            try other.write { db in
                try db.execute(sql: "UPDATE entry SET bodyFile = '../victim.txt' WHERE url = ?", arguments: [urls[0]])
            }
            #expect(try store.entries().map(\.key.url) == [urls[1]])
            #expect(try store.lookup(Entries.key(urls[0])).isEmpty)  // unreadable: its row is removed
            #expect(FileManager.default.fileExists(atPath: victim.path))
            try other.write { db in
                try db.execute(sql: "UPDATE entry SET bodyFile = '../victim.txt' WHERE url = ?", arguments: [urls[1]])
            }
            #expect(try store.remove(host: "example.com") == 1)
            #expect(FileManager.default.fileExists(atPath: victim.path))
        }
    }

    @Test("an index whose table goes from under a running store fails lookups with a StoreError, never a crash")
    func tableGone() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let key = Entries.key("https://example.com/lookup/gone")
            try store.store(Entries.make(key.url), body: Entries.body(10))
            #expect(try store.lookup(key).count == 1)
            // Another process, say one of a version with another schema, drops the table.
            let other = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            try other.write { db in try db.execute(sql: "DROP TABLE entry") }
            for _ in 0..<3 {
                #expect {
                    try store.lookup(key)
                } throws: { error in
                    (error as? StoreError)?.code == .databaseFailure
                        && "\(error)".contains("no such table: entry")
                }
            }
        }
    }
}
