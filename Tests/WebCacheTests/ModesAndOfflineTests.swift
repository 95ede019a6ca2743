import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

@Suite("Engine: request modes, offline use, redirects, stale serving")
struct ModesAndOfflineTests {
    static func fresh(_ text: String) -> TestOrigin.Handler {
        { _ in .text(text, headers: [("Cache-Control", "max-age=60"), ("ETag", "\"\(text)\"")]) }
    }

    @Test("reload skips the cache but stores; reload-ignoring-remote-caches also sends no-cache")
    func reloadModes() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/m", Self.fresh("m"))
            _ = try await h.get("/m")
            let reloaded = try await h.get("/m", mode: .reload)
            #expect(!reloaded.isFromCache && h.origin.count("/m") == 2)
            _ = try await h.get("/m", mode: .reloadIgnoringRemoteCaches)
            #expect(h.origin.requests(to: "/m").last?.header("Cache-Control") == "no-cache")
            #expect(h.origin.requests(to: "/m").last?.header("Pragma") == "no-cache")
            let cached = try await h.get("/m")
            #expect(cached.isFromCache)
        }
    }

    @Test("prefer-cache serves a stale response without the network; only-cache answers 504 on a miss")
    func cacheOnlyModes() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/p", Self.fresh("p"))
            _ = try await h.get("/p")
            h.clock.advance(10_000)
            let preferred = try await h.get("/p", mode: .preferCache)
            #expect(preferred.isFromCache && preferred.text == "p")
            let only = try await h.get("/p", mode: .onlyCache)
            #expect(only.isFromCache)
            let miss = try await h.get("/nothing", mode: .onlyCache)
            #expect(miss.head.status == .gatewayTimeout)
            let viaHeader = try await h.get("/nothing", ["Cache-Control: only-if-cached"])
            #expect(viaHeader.head.status == .gatewayTimeout)
            #expect(h.origin.count("/p") == 1 && h.origin.count("/nothing") == 0)
        }
    }

    @Test("revalidate mode validates even a fresh response")
    func revalidateMode() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/rv") { request in
                request.header("If-None-Match") == "\"rv\""
                    ? .init(status: 304) : .text("rv", headers: [("Cache-Control", "max-age=600"), ("ETag", "\"rv\"")])
            }
            _ = try await h.get("/rv")
            let validated = try await h.get("/rv", mode: .revalidate)
            #expect(validated.text == "rv" && validated.statusLine.contains("fwd-status=304"))
            #expect(h.origin.count("/rv") == 2)
        }
    }

    @Test("offline: a stale response is served within the policy's limit, marked offline")
    func offlineStale() async throws {
        try await EngineHarness.run(policy: CachePolicy(offlineMaxStale: 3600)) { h in
            h.origin.route("/o") { _ in .text("page", headers: [("Cache-Control", "max-age=10")]) }
            h.origin.route("/nc") { _ in
                .text("no-cache page", headers: [("Cache-Control", "no-cache"), ("ETag", "\"n\"")])
            }
            _ = try await h.get("/o")
            _ = try await h.get("/nc")
            try await h.origin.stop()
            h.clock.advance(600)
            let stale = try await h.get("/o")
            #expect(stale.text == "page" && stale.statusLine.contains("detail=offline"))
            let noCache = try await h.get("/nc")
            #expect(noCache.text == "no-cache page")
            h.clock.advance(7200)
            await #expect(throws: CacheError.self) { try await h.get("/o") }
        }
    }

    @Test("offline: a miss is a clear error, not a hang")
    func offlineMiss() async throws {
        try await EngineHarness.run { h in
            try await h.origin.stop()
            do {
                _ = try await h.get("/never")
                Issue.record("expected an error")
            } catch let error as CacheError {
                #expect(error.code == .offlineMiss)
            }
        }
    }

    @Test("strict offline policy follows RFC 9111 §4.2.4: no-cache pages are not served unvalidated")
    func strictOffline() async throws {
        try await EngineHarness.run(policy: CachePolicy(offlineStrict: true)) { h in
            h.origin.route("/nc") { _ in .text("x", headers: [("Cache-Control", "no-cache"), ("ETag", "\"n\"")]) }
            h.origin.route("/ok") { _ in .text("y", headers: [("Cache-Control", "max-age=1")]) }
            _ = try await h.get("/nc")
            _ = try await h.get("/ok")
            try await h.origin.stop()
            h.clock.advance(100)
            await #expect(throws: CacheError.self) { try await h.get("/nc") }
            let ok = try await h.get("/ok")
            #expect(ok.text == "y")
        }
    }

    @Test("redirects: each hop is cached by its own headers and the chain replays offline")
    func redirects() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/old") { _ in .init(status: 301, headers: [("Location", "/middle")]) }
            h.origin.route("/middle") { _ in
                .init(status: 302, headers: [("Location", "/new"), ("Cache-Control", "max-age=600")])
            }
            h.origin.route("/temp") { _ in .init(status: 302, headers: [("Location", "/new")]) }
            h.origin.route("/new") { _ in .text("arrived", headers: [("Cache-Control", "max-age=600")]) }
            let online = try await h.get("/old", follow: true)
            #expect(online.text == "arrived" && online.url.path == "/new")
            let temp = try await h.get("/temp", follow: true)
            #expect(temp.text == "arrived")
            try await h.origin.stop()
            let offline = try await h.get("/old", follow: true)
            #expect(offline.text == "arrived" && offline.isFromCache)
            // A 302 without explicit freshness is not stored (RFC 9111 §3), so it cannot replay.
            await #expect(throws: CacheError.self) { try await h.get("/temp", follow: true) }
            let unfollowed = try await h.get("/old")
            #expect(unfollowed.head.status == .movedPermanently)
        }
    }

    @Test("stale-while-revalidate serves stale at once and refreshes once in the background")
    func staleWhileRevalidate() async throws {
        try await EngineHarness.run { h in
            let version = Counter()
            h.origin.route("/swr") { _ in
                .text("v\(version.next())", headers: [("Cache-Control", "max-age=1, stale-while-revalidate=60")])
            }
            _ = try await h.get("/swr")
            h.clock.advance(5)
            let stale = try await h.get("/swr")
            #expect(stale.text == "v1" && stale.statusLine.contains("detail=stale-while-revalidate"))
            await h.cache.waitForBackgroundWork()
            #expect(h.origin.count("/swr") == 2)
            let refreshed = try await h.get("/swr")
            #expect(refreshed.text == "v2" && refreshed.isFromCache)
        }
    }

    @Test("stale-if-error serves the stored response when the origin answers 503")
    func staleIfError() async throws {
        try await EngineHarness.run { h in
            let failing = Counter()
            h.origin.route("/sie") { _ in
                failing.next() == 1
                    ? .text("good", headers: [("Cache-Control", "max-age=1, stale-if-error=600")])
                    : .text("down", status: 503)
            }
            _ = try await h.get("/sie")
            h.clock.advance(10)
            let served = try await h.get("/sie")
            #expect(served.text == "good" && served.statusLine.contains("detail=stale-if-error"))
        }
    }
}
