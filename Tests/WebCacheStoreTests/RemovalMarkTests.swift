import Foundation
import Testing
import WebCacheStore
import WebCacheTestSupport

/// An entry whose request was sent before a removal that covers it is not stored: it may hold
/// what the removal (an invalidation by an unsafe request, a cleared host, group or store) was
/// to discard.
@Suite("Removal marks: entries removed while on their way are not stored")
struct RemovalMarkTests {
    @Test("an entry marked before its URL was removed is turned away; one marked after, or another URL's, is stored")
    func byURL() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let url = "https://example.com/doc"
            let before = store.removalMark
            try store.remove(url: URL(string: url)!)

            var late = Entries.make(url)
            late.removalMark = before
            #expect(throws: StoreError.self) { try store.store(late, body: Entries.body(10)) }
            #expect(try store.lookup(Entries.key(url)).isEmpty)
            #expect(store.removedMeanwhile(Entries.key(url), since: before))

            var other = Entries.make("https://example.com/other")
            other.removalMark = before
            #expect(try store.store(other, body: Entries.body(10)) != nil)

            var fresh = Entries.make(url)
            fresh.removalMark = store.removalMark
            #expect(try store.store(fresh, body: Entries.body(10)) != nil)
            #expect(try store.lookup(Entries.key(url)).count == 1)
            #expect(try store.store(Entries.make(url), body: Entries.body(10)) != nil, "unmarked entries are stored")
        }
    }

    @Test("the error names the entry and its code says why")
    func errorCode() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let url = "https://example.com/doc"
            var entry = Entries.make(url)
            entry.removalMark = store.removalMark
            try store.remove(key: Entries.key(url))
            do {
                _ = try store.store(entry, body: Entries.body(3000))  // a body file, which is deleted
                Issue.record("stored an entry removed meanwhile")
            } catch let error as StoreError {
                #expect(error.code == .removedMeanwhile)
                #expect(error.message.contains(url))
            }
            let bodies = try FileManager.default.subpathsOfDirectory(atPath: directory.path)
                .filter { $0.hasSuffix(".body") }
            #expect(bodies.isEmpty)
        }
    }

    @Test("removals of a host, a group, a URL prefix and everything turn away what they cover, and only that")
    func scopes() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            func stores(_ url: String, group: String? = nil, after removal: () throws -> Void) throws -> Bool {
                var entry = Entries.make(url, group: group)
                entry.removalMark = store.removalMark
                try removal()
                do {
                    return try store.store(entry, body: Entries.body(10)) != nil
                } catch let error as StoreError where error.code == .removedMeanwhile {
                    return false
                }
            }
            #expect(try !stores("https://a.example/x") { try store.remove(host: "A.example") })
            #expect(try stores("https://b.example/x") { try store.remove(host: "a.example") })
            #expect(try !stores("https://a.example/x", group: "page") { try store.remove(group: "page") })
            #expect(try stores("https://a.example/x", group: "other") { try store.remove(group: "page") })
            #expect(try !stores("https://a.example/api/1") { try store.remove(urlPrefix: "https://a.example/api/") })
            #expect(try stores("https://a.example/img/1") { try store.remove(urlPrefix: "https://a.example/api/") })
            #expect(try !stores("https://c.example/x") { try store.removeAll() })
        }
    }

    @Test("when more URLs are removed than are remembered, older marks are turned away, never let through")
    func bounded() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let old = store.removalMark
            let key = Entries.key("https://example.com/kept")
            for index in 0..<4096 {
                try store.remove(url: URL(string: "https://example.com/removed/\(index)")!)
            }
            #expect(!store.removedMeanwhile(key, since: old))
            try store.remove(url: URL(string: "https://example.com/removed/one-too-many")!)
            #expect(store.removedMeanwhile(key, since: old))
            #expect(!store.removedMeanwhile(key, since: store.removalMark))
        }
    }
}
