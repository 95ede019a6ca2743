import Dispatch
import Foundation
import HTTPCaching
import Testing
import WebCacheTestSupport

@testable import WebCache
@testable import WebCacheProxy
@testable import WebCacheStore

@Suite("A stuck index: misses answered without waiting for it, and not stored past what may wait")
struct StuckIndexTests {
    @Test(
        "with the index writer stuck, misses are answered at once and, past the most entries on their way, not stored (counted as store problems); once the writer is back, the entries on their way are hits and the others are fetched again"
    )
    func missesPastAStuckIndex() async throws {
        try await TestOrigin.with { origin in
            for index in 0..<8 {
                origin.route("/\(index)") { _ in .text("body \(index)", headers: [("Cache-Control", "max-age=600")]) }
            }
            // The writer's first batch is held until the test lets it go (or 20 s).
            let release = DispatchSemaphore(value: 0)
            let first = Locked(true)
            let hold: @Sendable ([String]) -> Void = { _ in
                guard
                    first.withLock({ first in
                        defer { first = false }
                        return first
                    })
                else { return }
                _ = release.wait(timeout: .now() + .seconds(20))
            }
            defer { release.signal() }
            let made = Locked<HTTPCache?>(nil)
            try await ProxyTests.withProxy(
                origin,
                adjust: {
                    $0.store.beforeWritingRows = hold
                    $0.store.maximumEntriesOnTheirWay = 4
                },
                made: { cache in made.withLock { $0 = cache } }
            ) { port, _ in
                let cache = try #require(made.withLock { $0 })
                func get(_ index: Int) async throws -> String {
                    try await RawHTTPClient.exchange(
                        port: port, "GET /\(index) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", timeout: 10)
                }
                let started = ContinuousClock.now
                for index in 0..<8 {
                    let answer = try await get(index)
                    #expect(answer.hasSuffix("body \(index)"), "\(answer)")
                }
                // Not held for the writer (a lookup of an entry on its way waits up to 2 s each).
                let took = ContinuousClock.now - started
                #expect(took < .seconds(8), "took \(took)")
                #expect(cache.counters.storeProblems == 4)
                #expect(cache.store.newRows.backlog.rows == 4)
                let metrics = try await RawHTTPClient.exchange(
                    port: port, "GET /_webcache/metrics HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                #expect(metrics.contains("\nwebcache_index_entries_waiting 4.0\n"), "\(metrics)")
                release.signal()
                await cache.store.entriesOnTheirWayWritten()
                #expect(cache.entriesWaitingForIndex == 0)
                for index in 0..<8 {
                    let answer = try await get(index)
                    #expect(answer.hasSuffix("body \(index)"), "\(answer)")
                    let status = answer.firstLine(containing: "Cache-Status") ?? ""
                    #expect(status.contains("; hit") == (index < 4), "\(index): \(status)")
                    #expect(origin.count("/\(index)") == (index < 4 ? 1 : 2))
                }
            }
        }
    }
}
