import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCacheStore
import WebCacheTestSupport

@Suite("Store round trips")
struct StoreRoundTripTests {
    @Test("inline and file bodies come back byte for byte with their heads", arguments: [0, 10, 1024, 1025, 300_000])
    func roundTrip(size: Int) async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let body = Entries.body(size)
            let entry = try #require(
                try store.store(
                    Entries.make("https://example.com/a?x=1", headers: ["Cache-Control: max-age=60", "ETag: \"v1\""]),
                    body: body))
            #expect(entry.bodySize == size)
            let found = try store.lookup(Entries.key("https://example.com/a?x=1"))
            #expect(found.count == 1)
            #expect(try byteDifference(store.readBody(found[0]), body) == nil)
            #expect(found[0].stored.response.headerFields[.eTag] == "\"v1\"")
            #expect(found[0].stored.requestTime == Fixtures.epoch)
            // A second store on the same directory (a restart) sees the same.
            let reopened = try CacheStore(configuration: .test(directory, memory: 0))
            let again = try reopened.lookup(Entries.key("https://example.com/a?x=1"))
            #expect(try byteDifference(reopened.readBody(#require(again.first)), body) == nil)
            #expect(again.first?.stored.response.headerFields[.cacheControl] == "max-age=60")
        }
    }

    @Test("the query string is part of the key; fragments and host case are not")
    func keys() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            try store.store(Entries.make("https://Example.COM/p?q=1#frag"), body: Data("one".utf8))
            try store.store(Entries.make("https://example.com/p?q=2"), body: Data("two".utf8))
            #expect(try store.lookup(Entries.key("https://example.com/p?q=1")).count == 1)
            #expect(try store.readBody(store.lookup(Entries.key("https://example.com/p?q=2"))[0]) == Data("two".utf8))
            #expect(try store.lookup(Entries.key("https://example.com/p")).isEmpty)
            #expect(Entries.key("https://Example.COM/p?q=1#frag").url == "https://example.com/p?q=1")
        }
    }

    @Test("variants are kept side by side; the same variant is replaced; only Vary-named request fields are kept")
    func variants() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let url = "https://example.com/v"
            try store.store(
                Entries.make(
                    url, vary: ["Accept-Language"], request: ["Accept-Language: en", "Authorization: secret"]),
                body: Data("en".utf8))
            try store.store(
                Entries.make(url, vary: ["Accept-Language"], request: ["Accept-Language: de"]), body: Data("de".utf8))
            try store.store(
                Entries.make(url, vary: ["Accept-Language"], request: ["Accept-Language: de"]), body: Data("de2".utf8))
            let variants = try store.lookup(Entries.key(url))
            #expect(variants.count == 2)
            let rules = CacheRules.private
            let german = try #require(
                rules.selectVariant(
                    from: variants.map(\.stored), for: Fixtures.request(.get, url, ["Accept-Language: de"])))
            let entry = try #require(variants.first { $0.stored == german })
            #expect(try store.readBody(entry) == Data("de2".utf8))
            let english = try #require(variants.first { $0.varyKey.contains("en") })
            #expect(english.stored.request.headerFields[.authorization] == nil)
            #expect(english.stored.request.headerFields[.acceptLanguage] == "en")
            #expect(try store.statistics().entries == 2)
        }
    }

    @Test("a 304 refreshes the stored head and keeps the body")
    func updateHead() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let url = "https://example.com/h"
            let entry = try #require(
                try store.store(
                    Entries.make(url, headers: ["Cache-Control: max-age=1", "ETag: \"e\""]), body: Entries.body(5000)))
            let rules = CacheRules.private
            let refreshed = rules.updating(
                entry.stored, with: Fixtures.response(304, ["Cache-Control: max-age=600", "ETag: \"e\""]),
                requestTime: Fixtures.at(100), responseTime: Fixtures.at(100))
            try store.updateHead(of: entry, with: refreshed)
            let found = try #require(try store.lookup(Entries.key(url)).first)
            #expect(found.stored.response.headerFields[.cacheControl] == "max-age=600")
            #expect(found.stored.responseTime == Fixtures.at(100))
            #expect(try store.readBody(found) == Entries.body(5000))
        }
    }

    @Test("large bodies stream in and out in chunks")
    func streaming() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 0))
            let writer = try store.makeWriter(for: Entries.make("https://example.com/big"))
            var expected = CRCCheck()
            for index in 0..<80 {
                let chunk = Entries.body(64 << 10, seed: UInt8(index))
                expected.add(chunk)
                try writer.write(chunk)
            }
            let entry = try #require(try writer.commit())
            #expect(entry.bodySize == 80 * (64 << 10))
            let reopened = try CacheStore(configuration: .test(directory, memory: 0))
            let reader = try reopened.openBody(#require(try reopened.lookup(entry.key).first), chunkSize: 100_000)
            var actual = CRCCheck()
            var largest = 0
            while let chunk = try reader.next() {
                actual.add(chunk)
                largest = max(largest, chunk.count)
            }
            #expect(actual == expected)
            #expect(largest <= 100_000)
        }
    }

    @Test("a body over the maximum entry size is not stored, and nothing is left behind")
    func tooLarge() async throws {
        try await TemporaryDirectory.with { directory in
            var configuration = CacheStore.Configuration.test(directory)
            configuration.maximumEntrySize = 10_000
            let store = try CacheStore(configuration: configuration)
            let writer = try store.makeWriter(for: Entries.make("https://example.com/huge"))
            try writer.write(Entries.body(6000))
            #expect(!writer.isAbandoned)
            try writer.write(Entries.body(6000))
            #expect(writer.isAbandoned)
            try writer.write(Entries.body(6000))
            #expect(try writer.commit() == nil)
            #expect(try store.lookup(Entries.key("https://example.com/huge")).isEmpty)
            #expect(bodyFiles(in: directory).isEmpty)
        }
    }
}

/// An order-sensitive digest of chunks, to compare streams without holding them.
struct CRCCheck: Equatable {
    var count = 0
    var hash: UInt64 = 14_695_981_039_346_656_037

    mutating func add(_ data: Data) {
        count += data.count
        for byte in data { hash = (hash ^ UInt64(byte)) &* 1_099_511_628_211 }
    }
}

@Suite("Batch stores")
struct BatchStoreTests {
    @Test("a batch stores small bodies inline and large ones in files, replacing earlier variants")
    func batch() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            try store.store(Entries.make("https://example.com/b/0"), body: Data("old".utf8))
            let items = (0..<10).map {
                (
                    entry: Entries.make("https://example.com/b/\($0)"),
                    body: Entries.body($0 == 9 ? 5000 : 100, seed: UInt8($0))
                )
            }
            let stored = try store.storeBatch(items)
            #expect(stored.count == 10)
            #expect(try store.statistics().entries == 10)
            #expect(
                try store.readBody(store.lookup(Entries.key("https://example.com/b/0"))[0])
                    == Entries.body(100, seed: 0))
            #expect(
                try store.readBody(store.lookup(Entries.key("https://example.com/b/9"))[0])
                    == Entries.body(5000, seed: 9))
            #expect(bodyFiles(in: directory).count == 1)
        }
    }
}
