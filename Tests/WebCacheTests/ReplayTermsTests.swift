import Foundation
import HTTPTypes
import Testing
import WebCache
import WebCacheStore
import WebCacheTestSupport

@Suite("Engine: repeating a fresh answer to the same request")
struct ReplayTermsTests {
    /// Stores `path` (fresh for 600 s) and returns the request and a stored answer with terms.
    private static func storedAnswer(_ h: EngineHarness, _ path: String) async throws -> (HTTPRequest, CacheResponse) {
        _ = try await h.get(path)
        let request = Fixtures.request(.get, h.origin.url(path).absoluteString, [])
        // The first lookup after storing reads the index; the memory tier answers from then on.
        _ = h.cache.storedResponse(for: request)
        let answer = try #require(h.cache.storedResponse(for: request))
        return (request, answer)
    }

    @Test("an answer replays, counted as a hit, until its Age would change")
    func untilTheAgeChanges() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/a") { _ in .text("a", headers: [("Cache-Control", "max-age=600")]) }
            let (request, answer) = try await Self.storedAnswer(h, "/a")
            #expect(answer.head.headerFields[.age] == "0")
            let terms = try #require(answer.replayTerms)
            let before = h.cache.counters
            #expect(h.cache.confirmReplay(terms))
            #expect(h.cache.confirmReplay(terms))
            let after = h.cache.counters
            #expect(after.hits == before.hits + 2 && after.requests == before.requests + 2)
            #expect(after.bytesFromCache == before.bytesFromCache + 2)
            h.clock.advance(0.9)
            #expect(h.cache.confirmReplay(terms))
            h.clock.advance(0.2)
            #expect(!h.cache.confirmReplay(terms), "the Age is now 1")
            #expect(h.cache.storedResponse(for: request)?.head.headerFields[.age] == "1")
            h.clock.advance(-5)
            #expect(!h.cache.confirmReplay(terms), "a clock that went back ends the replays")
        }
    }

    @Test("a change to the store or the settings ends the replays")
    func changesEndRepeats() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/a") { _ in .text("a", headers: [("Cache-Control", "max-age=600")]) }
            h.origin.route("/b") { _ in .text("b", headers: [("Cache-Control", "max-age=600")]) }
            var (_, answer) = try await Self.storedAnswer(h, "/a")
            #expect(try h.cache.clear(url: h.origin.url("/a")) == 1)
            #expect(!h.cache.confirmReplay(try #require(answer.replayTerms)), "removed")

            (_, answer) = try await Self.storedAnswer(h, "/a")
            _ = try await h.get("/b")
            #expect(
                !h.cache.confirmReplay(try #require(answer.replayTerms)),
                "the store changed (conservatively, any entry)")

            (_, answer) = try await Self.storedAnswer(h, "/a")
            h.cache.updatePolicy { $0.block = .init(urlPatterns: ["*/a"]) }
            #expect(!h.cache.confirmReplay(try #require(answer.replayTerms)), "the policy changed")
        }
    }

    @Test("no terms for answers with side effects: sliding expiry, stale answers, other modes")
    func noTerms() async throws {
        let policy = CachePolicy(lifetimes: [.init(urlPatterns: ["*/slide"], ttl: 100, slidingExpiry: true)])
        try await EngineHarness.run(policy: policy) { h in
            h.origin.route("/slide") { _ in .text("s") }
            h.origin.route("/swr") { _ in
                .text("w", headers: [("Cache-Control", "max-age=1, stale-while-revalidate=60")])
            }
            let (_, sliding) = try await Self.storedAnswer(h, "/slide")
            #expect(sliding.isFromCache && sliding.replayTerms == nil)

            let (request, fresh) = try await Self.storedAnswer(h, "/swr")
            #expect(fresh.replayTerms != nil)
            #expect(h.cache.storedResponse(for: request, mode: .preferCache)?.replayTerms == nil)
            h.clock.advance(5)
            let stale = try #require(h.cache.storedResponse(for: request))
            #expect(stale.cacheStatus.detail == "stale-while-revalidate" && stale.replayTerms == nil)
        }
    }

    @Test("with an app-set expiry, the answer replays only while its time left reads the same")
    func appExpiry() async throws {
        let policy = CachePolicy(lifetimes: [.init(urlPatterns: ["*/ttl"], ttl: 30)])
        try await EngineHarness.run(policy: policy) { h in
            h.origin.route("/ttl") { _ in .text("t", headers: [("Cache-Control", "max-age=5")]) }
            let (request, atStore) = try await Self.storedAnswer(h, "/ttl")
            // 30 s left exactly: the next instant reads 29, so nothing to repeat.
            #expect(atStore.head.headerFields[.cacheStatus]?.contains("ttl=30") == true && atStore.replayTerms == nil)
            h.clock.advance(0.25)
            let answer = try #require(h.cache.storedResponse(for: request))
            #expect(answer.head.headerFields[.cacheStatus]?.contains("ttl=29") == true)
            let terms = try #require(answer.replayTerms)
            h.clock.advance(0.5)
            #expect(h.cache.confirmReplay(terms))
            h.clock.advance(0.3)
            #expect(!h.cache.confirmReplay(terms))
            #expect(h.cache.storedResponse(for: request)?.head.headerFields[.cacheStatus]?.contains("ttl=28") == true)
        }
    }
}
