import Foundation
import GRDB
import HTTPCaching
import HTTPTypes
import Testing
import WebCacheStore
import WebCacheTestSupport

@Suite("Memory tier")
struct MemoryTierTests {
    @Test("stays within its capacity and keeps the most recently used keys")
    func bounded() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 20_000, disk: 10 << 20))
            for index in 0..<50 {
                let url = "https://example.com/m/\(index)"
                try store.store(Entries.make(url), body: Entries.body(1000))
                _ = try store.readBody(#require(try store.lookup(Entries.key(url)).first))
            }
            let bytes = try store.statistics().memoryBytes
            #expect(bytes > 0 && bytes <= 20_000)
        }
    }

    @Test("heads count by their fields: large header fields fill the tier sooner than small ones")
    func headsCountByFields() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let small = Entries.key("https://example.com/small")
            let large = Entries.key("https://example.com/large")
            let padding = (0..<20).map { "X-Padding-\($0): \(String(repeating: "v", count: 200))" }
            let stylesheet = [
                "Server: webcache-sample-site", "Cache-Control: max-age=3600", "ETag: \"1a3-21757cc0\"",
                "Content-Type: text/css; charset=utf-8", "Content-Length: 419",
            ]
            try store.store(Entries.make(small.url, headers: stylesheet), body: Entries.body(419))
            _ = try store.lookup(small)
            let withSmall = try store.statistics().memoryBytes
            try store.store(
                Entries.make(large.url, headers: ["Cache-Control: max-age=60"] + padding), body: Entries.body(10))
            _ = try store.lookup(large)
            let withBoth = try store.statistics().memoryBytes
            // The 20 extra fields carry over 4,000 bytes of text, each field an object or two besides.
            #expect(withBoth - withSmall >= 20 * (200 + 12))
            // A proxied stylesheet's entry took 2.7 KB of resident memory, measured on the proxy.
            #expect((2_000...4_000).contains(withSmall))
        }
    }

    @Test("a 304's refreshed head replaces the held one: the next lookup finds it in memory, and the index has it too")
    func refreshedHeadStaysHeld() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/no-cache-page")
            let entry = try #require(
                try store.store(
                    Entries.make(key.url, headers: ["Cache-Control: no-cache", "ETag: \"e\""]), body: Entries.body(10)))
            _ = try store.lookup(key)  // now held in memory
            let before = store.revision
            let refreshed = CacheRules.private.updating(
                entry.stored, with: Fixtures.response(304, ["Cache-Control: no-cache", "ETag: \"e\"", "X-Seen: 2"]),
                requestTime: Fixtures.at(100), responseTime: Fixtures.at(100))
            try store.updateHead(of: entry, with: refreshed)
            #expect(store.revision != before, "answers made from the old head are not replayed")
            let held = try #require(try store.lookupWithRevision(key, entryOnItsWay: .waitFor))
            #expect(held.revision != nil, "answered from memory, not read back from the index")
            #expect(held.entries.first?.stored.response.headerFields[HTTPField.Name("X-Seen")!] == "2")
            #expect(held.entries.first?.stored.responseTime == Fixtures.at(100))

            let index = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            let written = try index.read { db in
                try Double.fetchOne(db, sql: "SELECT responseTime FROM entry WHERE id = ?", arguments: [entry.id])
            }
            #expect(written == Fixtures.at(100).timeIntervalSince1970)
        }
    }

    @Test("an entry refreshed again within a second has its head written once: the latest goes to the index later")
    func refreshesWithinASecond() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/hot-page")
            let entry = try #require(
                try store.store(
                    Entries.make(key.url, headers: ["Cache-Control: no-cache", "ETag: \"e\""]), body: Entries.body(10)))
            _ = try store.lookup(key)
            func refresh(_ seen: String, at second: Int) throws {
                let current = try #require(try store.lookup(key).first)
                let refreshed = CacheRules.private.updating(
                    current.stored,
                    with: Fixtures.response(304, ["Cache-Control: no-cache", "ETag: \"e\"", "X-Seen: \(seen)"]),
                    requestTime: Fixtures.at(second), responseTime: Fixtures.at(second))
                try store.updateHead(of: current, with: refreshed)
            }
            let index = try DatabaseQueue(path: directory.appendingPathComponent("index.sqlite").path)
            func written() throws -> Double? {
                try index.read { db in
                    try Double.fetchOne(db, sql: "SELECT responseTime FROM entry WHERE id = ?", arguments: [entry.id])
                }
            }
            let firstWrite = ContinuousClock.now
            try refresh("1", at: 100)
            #expect(try written() == Fixtures.at(100).timeIntervalSince1970, "the first refresh is written at once")
            try refresh("2", at: 101)
            try refresh("3", at: 102)
            let held = try #require(try store.lookup(key).first)
            #expect(held.stored.response.headerFields[HTTPField.Name("X-Seen")!] == "3", "lookups see the latest")
            // Within the second (a machine slow enough to take longer writes them, rightly).
            if ContinuousClock.now - firstWrite < .milliseconds(900) {
                #expect(try written() == Fixtures.at(100).timeIntervalSince1970, "the next ones wait")
            }
            store.flushAccesses()
            #expect(try written() == Fixtures.at(102).timeIntervalSince1970, "the latest is written, not lost")
        }
    }

    @Test("a write invalidates the key, so the next lookup sees the new body")
    func invalidation() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/w")
            try store.store(Entries.make(key.url), body: Data("one".utf8))
            #expect(try store.readBody(store.lookup(key)[0]) == Data("one".utf8))
            try store.store(Entries.make(key.url), body: Data("two".utf8))
            #expect(try store.readBody(store.lookup(key)[0]) == Data("two".utf8))
            try store.remove(key: key)
            #expect(try store.lookup(key).isEmpty)
        }
    }

    @Test("a disabled memory tier holds nothing")
    func disabled() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            try store.store(Entries.make("https://example.com/d"), body: Entries.body(100))
            _ = try store.readBody(store.lookup(Entries.key("https://example.com/d"))[0])
            #expect(try store.statistics().memoryBytes == 0)
        }
    }
}

@Suite("Memory tier and misses")
struct MemoryTierMissTests {
    @Test("misses are not remembered: an entry stored by another store instance is found")
    func missesNotCached() async throws {
        try await TemporaryDirectory.with { directory in
            let first = try CacheStore(configuration: .test(directory))
            let second = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/later")
            #expect(try first.lookup(key).isEmpty)
            try second.store(Entries.make(key.url), body: Data("x".utf8))
            #expect(try first.lookup(key).count == 1)
            for index in 0..<1000 { _ = try first.lookup(Entries.key("https://example.com/miss/\(index)")) }
            #expect(try first.statistics().memoryBytes < 2000)
        }
    }
}
