import Foundation
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
