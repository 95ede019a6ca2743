import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheStore
import WebCacheTestSupport

/// Offline for real: origins that refuse, that never answer, that stop half-way, and names that
/// do not resolve, with real connections. The time bounds checked here are far looser than the
/// targets (the benchmark measures those), so that a loaded machine passes; each sits well below
/// what the failure it catches would take (a connect retry loop of 10 s, an origin that answers
/// after 3 s).
@Suite("Offline through every front door: refused, silent, half-answered and unresolvable origins", .serialized)
struct OfflineTests {
    @Test("a refused connection is known at once: the stale copy comes back without a retry loop")
    func refusedAtOnce() async throws {
        try await EngineHarness.run(connectTimeout: .seconds(10)) { h in
            h.origin.route("/s") { _ in .text("stored", headers: [("Cache-Control", "max-age=1")]) }
            _ = try await h.get("/s")
            try await h.origin.stop()
            h.clock.advance(5)
            var response: CacheResponse?
            let elapsed = try await secondsTaken { response = try await h.get("/s") }
            #expect(response?.text == "stored")
            #expect(response?.statusLine.contains("detail=offline") == true)
            #expect(elapsed < 3, "the refused connection took \(elapsed) s to be known")
            let status = try #require(h.cache.unreachableOrigins.first)
            #expect(status.origin == "http://127.0.0.1:\(h.origin.port)")
            #expect(status.lastError.contains("refused"))
        }
    }

    @Test("a name that does not resolve is an offline miss at once, and remembered")
    func unresolvableName() async throws {
        try await EngineHarness.run { h in
            let url = URL(string: "http://webcache-test.invalid/page")!
            let elapsed = try await secondsTaken {
                do {
                    _ = try await h.cache.response(for: HTTPRequest(method: .get, url: url))
                    Issue.record("expected an offline miss")
                } catch let error as CacheError {
                    #expect(error.code == .offlineMiss)
                }
            }
            #expect(elapsed < 2)
            #expect(h.cache.unreachableOrigins.map(\.origin) == ["http://webcache-test.invalid:80"])
        }
    }

    @Test(
        "an origin that accepts and answers too late: the stored copy after the network timeout, the next requests at once, the store refreshed when the answer comes"
    )
    func silentOrigin() async throws {
        let policy = CachePolicy(networkTimeout: 0.5)
        try await EngineHarness.run(policy: policy) { h in
            let version = Locked(1)
            let slow = Locked(false)
            for path in ["/page", "/style.css"] {
                h.origin.route(path) { _ in
                    var response = TestOrigin.Response.text(
                        "\(path) version \(version.withLock { $0 })", headers: [("Cache-Control", "no-cache")])
                    if slow.withLock({ $0 }) { response.delay = .seconds(3) }
                    return response
                }
                _ = try await h.get(path)
            }
            version.withLock { $0 = 2 }
            slow.withLock { $0 = true }
            var answer: CacheResponse?
            let elapsed = try await secondsTaken { answer = try await h.get("/page") }
            #expect(answer?.text == "/page version 1")
            #expect(answer?.statusLine.contains("detail=network-timeout") == true)
            #expect(elapsed < 2.5, "served after \(elapsed) s")
            #expect(h.cache.unreachableOrigins.isEmpty, "a slow origin is not an unreachable one")
            // While that exchange is out, the origin's other stored responses do not wait.
            var other: CacheResponse?
            let otherElapsed = try await secondsTaken { other = try await h.get("/style.css") }
            #expect(
                other?.text == "/style.css version 1" && other?.statusLine.contains("detail=network-timeout") == true)
            #expect(otherElapsed < 1.5, "the second request waited \(otherElapsed) s")
            #expect(h.origin.count("/style.css") == 1)
            #expect(h.cache.counters.networkTimeouts == 2)
            // The exchange went on and refreshed the store.
            await h.cache.waitForBackgroundWork()
            slow.withLock { $0 = false }
            let refreshed = try await h.get("/page", mode: .onlyCache)
            #expect(refreshed.text == "/page version 2")
            // The origin answered: the next request goes to it again.
            let css = try await h.get("/style.css")
            #expect(css.text == "/style.css version 2")
        }
    }

    @Test("a blackholed origin (TCP accepted, nothing sent) does not hold a stored page hostage")
    func blackholedOrigin() async throws {
        let silent = SilentOrigin()
        try await silent.start()
        try await withCleanup({ try? await silent.stop() }) {
            try await EngineHarness.run(policy: CachePolicy(networkTimeout: 0.3)) { h in
                h.origin.route("/page") { _ in
                    .text("kept", headers: [("Cache-Control", "max-age=1"), ("ETag", "\"k\"")])
                }
                _ = try await h.get("/page")
                // The same stored response, now asked of an origin that only accepts connections.
                let key = try #require(CacheKey(url: h.origin.url("/page")))
                let entry = try #require(try h.cache.store.lookup(key).first)
                var stored = entry.stored
                stored.request = HTTPRequest(method: .get, url: silent.url("/page"))
                _ = try h.cache.store.store(NewEntry(stored: stored), body: Data("kept".utf8))
                h.clock.advance(10)
                var answer: CacheResponse?
                let elapsed = try await secondsTaken {
                    answer = try await h.cache.response(for: HTTPRequest(method: .get, url: silent.url("/page")))
                }
                #expect(answer?.text == "kept")
                #expect(answer?.statusLine.contains("detail=network-timeout") == true)
                #expect(elapsed < 3)
                #expect(silent.connectionsAccepted >= 1)
                try await silent.stop()  // ends the exchange still waiting in the background
            }
        }
    }

    @Test("an origin that sends half the body and hangs: the stored copy after the network timeout")
    func halfBodyThenHang() async throws {
        try await EngineHarness.run(policy: CachePolicy(networkTimeout: 0.3)) { h in
            let hang = Locked(false)
            h.origin.route("/doc") { _ in
                var response = TestOrigin.Response.text(
                    String(repeating: "x", count: 4000), headers: [("Cache-Control", "max-age=1")])
                if hang.withLock({ $0 }) {
                    response.pauseAfter = 100
                    response.pause = .seconds(4)
                }
                return response
            }
            _ = try await h.get("/doc")
            hang.withLock { $0 = true }
            h.clock.advance(10)
            var answer: CacheResponse?
            let elapsed = try await secondsTaken { answer = try await h.get("/doc") }
            #expect(answer?.body.count == 4000)
            #expect(answer?.statusLine.contains("detail=network-timeout") == true)
            #expect(elapsed < 3)
        }
    }

    @Test(
        "offline, a personal cache serves what RFC 9111 would validate; a shared one does not",
        arguments: [
            ("no-cache", HTTPCache.OfflinePosture.personal, true), ("must-revalidate, max-age=1", .personal, true),
            ("s-maxage=1", .personal, true), ("no-cache", .shared, false),
            ("must-revalidate, max-age=1", .shared, false),
            ("s-maxage=1", .shared, false), ("max-age=1", .shared, true),
        ])
    func posture(cacheControl: String, posture: HTTPCache.OfflinePosture, served: Bool) async throws {
        try await EngineHarness.run(rules: .shared, adjust: { $0.offlinePosture = posture }) { h in
            h.origin.route("/p") { _ in .text("page", headers: [("Cache-Control", cacheControl), ("ETag", "\"p\"")]) }
            _ = try await h.get("/p")
            try await h.origin.stop()
            h.clock.advance(60)
            if served {
                let answer = try await h.get("/p")
                #expect(answer.text == "page" && answer.statusLine.contains("detail=offline"))
            } else {
                await #expect(throws: CacheError.self) { try await h.get("/p") }
            }
        }
    }

    @Test("with a strict offline policy, pages a preload manifest holds still open offline, within offlineMaxStale")
    func manifestHeldUnderStrictPolicy() async throws {
        try await EngineHarness.run(policy: CachePolicy(offlineMaxStale: 3600, offlineStrict: true)) { h in
            h.origin.route("/held") { _ in .text("held", headers: [("Cache-Control", "no-cache"), ("ETag", "\"h\"")]) }
            h.origin.route("/loose") { _ in .text("loose", headers: [("Cache-Control", "no-cache"), ("ETag", "\"l\"")])
            }
            _ = try await h.get("/held")
            _ = try await h.get("/loose")
            try h.cache.store.save(
                PageManifest(
                    name: h.origin.url("/held").absoluteString, resources: [h.origin.url("/held")], isComplete: true,
                    createdAt: h.clock.now))
            try await h.origin.stop()
            h.clock.advance(60)
            #expect(try await h.get("/held").text == "held")
            await #expect(throws: CacheError.self) { try await h.get("/loose") }
            h.clock.advance(7200)
            await #expect(throws: CacheError.self) { try await h.get("/held") }
        }
    }

    @Test("a GET whose connection the origin drops before answering is sent once more; a POST is not")
    func droppedConnectionRetried() async throws {
        try await EngineHarness.run { h in
            let calls = Locked(0)
            for path in ["/flaky", "/form"] {
                h.origin.route(path) { _ in
                    let call = calls.withLock { count -> Int in
                        count += 1
                        return count
                    }
                    return call % 2 == 1
                        ? TestOrigin.Response(hangUp: true)
                        : .text("answered", headers: [("Cache-Control", "max-age=60")])
                }
            }
            let answer = try await h.get("/flaky")
            #expect(answer.text == "answered")
            #expect(h.origin.count("/flaky") == 2)
            #expect(h.cache.unreachableOrigins.isEmpty)
            await #expect(throws: CacheError.self) { try await h.send(.post, "/form", body: Data("a=1".utf8)) }
            #expect(h.origin.count("/form") == 1)
        }
    }
}
