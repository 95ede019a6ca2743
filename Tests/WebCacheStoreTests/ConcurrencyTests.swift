import Foundation
import HTTPCaching
import Testing
import WebCacheStore
import WebCacheTestSupport

@Suite("Concurrent readers and writers")
struct ConcurrencyTests {
    @Test("many tasks read and write at once; every read sees a whole body, never a torn one")
    func readersAndWriters() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, memory: 256 << 10))
            let urls = (0..<20).map { "https://example.com/c/\($0)" }
            for url in urls { try store.store(Entries.make(url), body: Entries.body(3000, seed: 0)) }
            try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for round in 0..<40 {
                            let url = urls[(writer * 7 + round) % urls.count]
                            try store.store(
                                Entries.make(url),
                                body: Entries.body(round % 2 == 0 ? 3000 : 30_000, seed: UInt8(round % 5)))
                        }
                        return 0
                    }
                }
                for reader in 0..<4 {
                    group.addTask {
                        var reads = 0
                        for round in 0..<200 {
                            let key = Entries.key(urls[(reader + round) % urls.count])
                            for entry in try store.lookup(key) {
                                do {
                                    let body = try store.readBody(entry)
                                    #expect(body.count == entry.bodySize)
                                    #expect([3000, 30_000].contains(body.count))
                                    reads += 1
                                } catch let error as StoreError
                                    where error.code == .corruptBody || error.code == .ioFailure
                                {
                                    // The entry was replaced between lookup and read: its file is gone
                                    // (or its row), a miss. A body of the wrong length or checksum would
                                    // be a torn read: that must never happen.
                                    let inner = (error.cause as? StoreError)?.code
                                    #expect(inner == nil || inner == .ioFailure, "a torn read: \(error)")
                                }
                            }
                        }
                        return reads
                    }
                }
                var total = 0
                for try await reads in group { total += reads }
                #expect(total > 0)
            }
            #expect(try store.statistics().entries == urls.count)
        }
    }

    @Test("two stores on one directory (two connections, as two processes have) do not corrupt each other")
    func twoStores() async throws {
        try await TemporaryDirectory.with { directory in
            let first = try CacheStore(configuration: .test(directory, memory: 0))
            let second = try CacheStore(configuration: .test(directory, memory: 0))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, store) in [first, second].enumerated() {
                    group.addTask {
                        for round in 0..<50 {
                            try store.store(
                                Entries.make("https://example.com/s\(index)/\(round % 10)"),
                                body: Entries.body(20_000, seed: UInt8(round)))
                            _ = try store.lookup(Entries.key("https://example.com/s\(1 - index)/\(round % 10)"))
                        }
                    }
                }
                try await group.waitForAll()
            }
            let reopened = try CacheStore(configuration: .test(directory, memory: 0))
            #expect(try reopened.statistics().entries == 20)
            for entry in try reopened.entries() {
                #expect(try reopened.readBody(entry).count == 20_000)
            }
            #expect(bodyFilesInUse(in: directory, besides: first, second).count == 20)
        }
    }
}
