import Foundation
import GRDB
import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

@Suite("Eviction, pinning, purging and namespaces")
struct EvictionTests {
    @Test(
        "a capacity of Int.max stores and trims without overflow, whatever the trim ratio",
        arguments: [1, 0.8, 1e-300])
    func largestCapacity(trimRatio: Double) async throws {
        try await TemporaryDirectory.with { directory in
            var configuration = CacheStore.Configuration.test(directory)
            configuration.diskCapacity = .max
            configuration.trimRatio = trimRatio
            let store = try CacheStore(configuration: configuration)
            try store.store(Entries.make("https://example.com/largest"), body: Entries.body(10))
            try store.trim()
            #expect(try store.statistics().entries == 1)
        }
    }

    @Test("over capacity, least recently used entries go, down to 80% in one pass")
    func lruTrim() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            let store = try CacheStore(configuration: .test(directory, clock: clock, disk: 10_000))
            for index in 0..<5 {
                clock.advance(1)
                try store.store(Entries.make("https://example.com/\(index)"), body: Entries.body(2000))
            }
            // Touch 0 and 1 so that 2 is now the least recently used (a minute later: access
            // times are kept to the minute).
            clock.advance(60)
            for index in [0, 1] {
                let entry = try #require(try store.lookup(Entries.key("https://example.com/\(index)")).first)
                store.recordAccess(entry, at: clock.now)
            }
            clock.advance(1)
            try store.store(Entries.make("https://example.com/5"), body: Entries.body(2000))  // 12,000 bytes > 10,000
            let left = Set(try store.entries().map(\.key.url))
            // Down to ≤ 8,000 bytes: the two least recently used (2 and 3) went.
            #expect(left == Set([0, 1, 4, 5].map { "https://example.com/\($0)" }))
            #expect(try store.statistics().diskBytes == 8000)
        }
    }

    /// A store in `directory` holding `count` entries of 1,000 bytes, filled with room to spare.
    static func fill(_ directory: URL, clock: TestClock, count: Int) throws {
        let roomy = try CacheStore(configuration: .test(directory, clock: clock, disk: 10 << 20))
        for index in 0..<count {
            clock.advance(1)
            try roomy.store(Entries.make("https://example.com/\(index)"), body: Entries.body(1000))
        }
    }

    @Test(
        "past the capacity, a store evicts at once what takes it back under, whatever the count; then on down to the target"
    )
    func backUnderCapacityAtOnce() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            let count = 2 * CacheStore.evictionsPerTransaction + 20
            try Self.fill(directory, clock: clock, count: count)
            let store = try CacheStore(configuration: .test(directory, clock: clock, disk: 10_000))
            clock.advance(1)
            try store.store(Entries.make("https://example.com/new-1"), body: Entries.body(1000))
            #expect(try store.statistics().diskBytes == 10_000, "back under the capacity in one store")
            #expect(try store.lookup(Entries.key("https://example.com/\(count - 10)")).isEmpty, "the oldest first")
            #expect(try !store.lookup(Entries.key("https://example.com/\(count - 9)")).isEmpty)
            clock.advance(1)
            try store.store(Entries.make("https://example.com/new-2"), body: Entries.body(1000))
            #expect(try store.statistics().diskBytes == 8000, "then down to the target")
        }
    }

    @Test(
        "from the capacity down to the target, each store evicts a batch of least recently used entries; at the target, none"
    )
    func batchedTrim() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            let batch = CacheStore.evictionsPerTransaction
            try Self.fill(directory, clock: clock, count: 150)
            // 151,000 bytes after the next store, 500 over the capacity; the target is 75,250.
            var configuration = CacheStore.Configuration.test(directory, clock: clock, disk: 150_500)
            configuration.trimRatio = 0.5
            let store = try CacheStore(configuration: configuration)
            clock.advance(1)
            try store.store(Entries.make("https://example.com/new-1"), body: Entries.body(1000))
            #expect(try store.statistics().diskBytes == 151_000 - batch * 1000, "one batch went")
            #expect(try store.lookup(Entries.key("https://example.com/\(batch - 1)")).isEmpty, "the oldest first")
            #expect(try !store.lookup(Entries.key("https://example.com/\(batch)")).isEmpty)
            clock.advance(1)
            try store.store(Entries.make("https://example.com/new-2"), body: Entries.body(1000))
            #expect(try store.statistics().diskBytes == 75_000, "on down to the target, under the capacity")
            clock.advance(1)
            try store.store(Entries.make("https://example.com/new-3"), body: Entries.body(1000))
            #expect(try store.statistics().diskBytes == 76_000, "at the target, a store evicts nothing")
        }
    }

    @Test("pinned groups survive eviction and go only when removed explicitly")
    func pinned() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            let store = try CacheStore(configuration: .test(directory, clock: clock, disk: 10_000))
            for index in 0..<3 {
                clock.advance(1)
                try store.store(
                    Entries.make("https://example.com/page/\(index)", group: "page", pinned: true),
                    body: Entries.body(2000))
            }
            for index in 0..<5 {
                clock.advance(1)
                try store.store(Entries.make("https://example.com/loose/\(index)"), body: Entries.body(2000))
            }
            let stats = try store.statistics()
            #expect(stats.pinnedEntries == 3)
            #expect(try store.entries(group: "page").count == 3)
            #expect(stats.diskBytes <= 10_000)
            #expect(try store.remove(group: "page") == 3)
            #expect(try store.entries(group: "page").isEmpty)
        }
    }

    @Test("unpinning a group makes it evictable")
    func unpin() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, disk: 5000))
            try store.store(Entries.make("https://example.com/p", group: "g", pinned: true), body: Entries.body(4000))
            try store.store(Entries.make("https://example.com/q"), body: Entries.body(1000))
            #expect(try store.setPinned(false, group: "g") == 1)
            try store.store(Entries.make("https://example.com/r"), body: Entries.body(1000))
            #expect(try store.lookup(Entries.key("https://example.com/p")).isEmpty)
        }
    }

    @Test("removal by URL, prefix, host, age and all")
    func removals() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let urls = [
                "https://a.test/x", "https://a.test/api/1", "https://a.test/api/2", "https://b.test/y",
                "https://b.test/z",
            ]
            for (index, url) in urls.enumerated() {
                try store.store(Entries.make(url, discardAfter: Fixtures.at(index * 100)), body: Entries.body(3000))
            }
            #expect(try store.remove(url: URL(string: "https://a.test/x")!) == 1)
            #expect(try store.remove(urlPrefix: "https://a.test/api/") == 2)
            #expect(try store.removeExpired(now: Fixtures.at(350)) == 1)  // b.test/y: discard after 300
            #expect(try store.statistics().hosts.map(\.host) == ["b.test"])
            #expect(try store.remove(host: "B.TEST") == 1)
            #expect(try store.statistics().entries == 0)
            #expect(bodyFilesInUse(in: directory, besides: store).isEmpty)
        }
    }

    @Test(
        "removal by URL takes every method's entries for it and nothing else, found through the key's index, not by reading every entry"
    )
    func removalByURLEveryMethod() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let other = try CacheStore(configuration: .test(directory, namespace: "other"))
            let url = "https://a.test/page"
            for method in [HTTPRequest.Method.get, .head, .post, .options] {
                var entry = Entries.make(url)
                entry.stored.request.method = method
                try store.store(entry, body: Entries.body(100))
            }
            for near in ["https://a.test/page?q", "https://a.test/pag", "https://a.test/page/x"] {
                try store.store(Entries.make(near), body: Entries.body(100))
            }
            try other.store(Entries.make(url), body: Entries.body(100))
            #expect(try store.remove(url: URL(string: url)!) == 4)
            #expect(try store.statistics().entries == 3)
            #expect(try other.statistics().entries == 1)
            #expect(try store.remove(url: URL(string: url)!) == 0)
            let plan = try store.pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: "EXPLAIN QUERY PLAN SELECT id FROM entry WHERE namespace = ? AND (\(CacheStore.urlCondition))",
                    arguments: ["default", "default", "default", url]
                ).map { $0["detail"] as String }
            }
            #expect(plan.first?.contains("(namespace=? AND method=? AND url=?)") == true, "\(plan)")
        }
    }

    @Test("namespaces share a directory; wiping one leaves the others")
    func namespaces() async throws {
        try await TemporaryDirectory.with { directory in
            let alice = try CacheStore(configuration: .test(directory, namespace: "alice"))
            let bob = try CacheStore(configuration: .test(directory, namespace: "bob"))
            try alice.store(Entries.make("https://example.com/same"), body: Entries.body(5000, seed: 1))
            try bob.store(Entries.make("https://example.com/same"), body: Entries.body(5000, seed: 2))
            #expect(
                try alice.readBody(alice.lookup(Entries.key("https://example.com/same"))[0])
                    == Entries.body(5000, seed: 1))
            #expect(
                try bob.readBody(bob.lookup(Entries.key("https://example.com/same"))[0]) == Entries.body(5000, seed: 2))
            #expect(try alice.removeAll() == 1)
            #expect(try alice.lookup(Entries.key("https://example.com/same")).isEmpty)
            let bobAgain = try CacheStore(configuration: .test(directory, namespace: "bob", memory: 0))
            #expect(
                try bobAgain.readBody(bobAgain.lookup(Entries.key("https://example.com/same"))[0])
                    == Entries.body(5000, seed: 2))
            #expect(try bobAgain.statistics().entries == 1)
        }
    }

    @Test("per-host statistics")
    func statistics() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            try store.store(Entries.make("https://a.test/1"), body: Entries.body(100))
            try store.store(Entries.make("https://a.test/2"), body: Entries.body(200))
            try store.store(Entries.make("https://b.test/1"), body: Entries.body(1000))
            let stats = try store.statistics()
            #expect(stats.entries == 3)
            #expect(stats.diskBytes == 1300)
            #expect(
                stats.hosts == [
                    .init(host: "b.test", entries: 1, bytes: 1000), .init(host: "a.test", entries: 2, bytes: 300),
                ])
        }
    }
}
