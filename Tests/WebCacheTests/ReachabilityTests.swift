import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheStore
import WebCacheTestSupport

@Suite("Engine: unreachable origins are known at once and remembered")
struct ReachabilityTests {
    /// A cache over a scripted origin, with a hand-moved clock.
    static func run(
        policy: CachePolicy = .init(), reachability: ReachabilitySettings = .init(),
        _ body: (HTTPCache, ScriptedOrigin, TestClock, URL) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = TestClock()
        let origin = ScriptedOrigin()
        var configuration = HTTPCache.Configuration(
            store: CacheStore.Configuration(directory: directory.url), policy: policy, now: { clock.now })
        configuration.reachability = reachability
        let cache = try HTTPCache(configuration: configuration, origin: origin)
        try await body(cache, origin, clock, directory.url)
        await cache.waitForBackgroundWork()
    }

    static let page = URL(string: "http://site.test/page")!

    static func get(_ cache: HTTPCache, _ url: URL = page) async throws -> CacheResponse {
        try await cache.response(for: HTTPRequest(method: .get, url: url))
    }

    @Test("after a refused connection, requests skip the origin for a window that doubles, then one probes it")
    func backoffWindow() async throws {
        try await Self.run { cache, origin, clock, _ in
            await #expect(throws: CacheError.self) { try await Self.get(cache) }
            #expect(origin.attempts == 1)
            #expect(cache.unreachableOrigins.map(\.origin) == ["http://site.test:80"])
            // Inside the 1 s window: no attempt.
            clock.advance(0.5)
            await #expect(throws: CacheError.self) { try await Self.get(cache) }
            #expect(origin.attempts == 1)
            #expect(cache.counters.unreachableSkips == 1)
            // The window has passed: one request probes, fails, and the window becomes 2 s.
            clock.advance(0.6)
            await #expect(throws: CacheError.self) { try await Self.get(cache) }
            #expect(origin.attempts == 2)
            #expect(cache.unreachableOrigins.first?.failures == 2)
            clock.advance(1.5)
            await #expect(throws: CacheError.self) { try await Self.get(cache) }
            #expect(origin.attempts == 2)
            clock.advance(0.6)
            origin.behave(.answer("back", cacheControl: "max-age=60"))
            let back = try await Self.get(cache)
            #expect(back.text == "back")
            #expect(origin.attempts == 3)
            #expect(cache.unreachableOrigins.isEmpty)
            #expect(try cache.store.originStatuses().isEmpty)
        }
    }

    @Test(
        "the window grows to the maximum and no further",
        arguments: [
            (1, 1.0), (2, 2.0), (3, 4.0), (6, 32.0), (7, 60.0), (40, 60.0), (Int.max, 60.0), (0, 1.0), (Int.min, 1.0),
        ])
    func windowGrowth(failures: Int, seconds: Double) {
        #expect(ReachabilitySettings().window(afterFailures: failures) == seconds)
    }

    @Test("a failure count read back at its largest (a damaged index) is counted on without overflow")
    func failuresAtTheirLargest() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = TestClock()
        let store = try CacheStore(configuration: .init(directory: directory.url))
        try store.saveOriginStatus(
            OriginStatus(
                origin: "http://site.test:80", failures: .max, unreachableSince: clock.now,
                retryAfter: clock.now, lastError: "refused"))
        let cache = try HTTPCache(
            configuration: .init(store: .init(directory: directory.url), now: { clock.now }), origin: ScriptedOrigin())
        await #expect(throws: CacheError.self) { try await Self.get(cache) }
        #expect(cache.unreachableOrigins.first?.failures == .max)
        await cache.waitForBackgroundWork()
    }

    @Test("a stale copy is served at once while the origin is unreachable; the probe runs in the background")
    func staleWhileUnreachable() async throws {
        try await Self.run { cache, origin, clock, _ in
            origin.behave(.answer("v1", cacheControl: "max-age=10"))
            _ = try await Self.get(cache)
            origin.behave(.refuse)
            clock.advance(20)
            let first = try await Self.get(cache)
            #expect(first.text == "v1" && first.statusLine.contains("detail=offline"))
            #expect(origin.attempts == 2)
            let second = try await Self.get(cache)
            #expect(second.text == "v1" && second.statusLine.contains("detail=offline"))
            #expect(origin.attempts == 2, "inside the window the origin is not tried")
            // The window passes and the origin is back: the request still gets the stored copy
            // at once, the probe in the background refreshes it, and the next one is fresh.
            origin.behave(.answer("v2", cacheControl: "max-age=10"))
            clock.advance(1.5)
            let probing = try await Self.get(cache)
            #expect(probing.text == "v1")
            await cache.waitForBackgroundWork()
            #expect(origin.attempts == 3)
            #expect(cache.unreachableOrigins.isEmpty)
            let fresh = try await Self.get(cache)
            #expect(fresh.text == "v2" && fresh.isFromCache)
            #expect(origin.attempts == 3)
        }
    }

    @Test("another cache on the same directory (another process) remembers the unreachable origin")
    func rememberedAcrossProcesses() async throws {
        try await Self.run { cache, origin, clock, directory in
            await #expect(throws: CacheError.self) { try await Self.get(cache) }
            let other = ScriptedOrigin()
            let second = try HTTPCache(
                configuration: .init(store: CacheStore.Configuration(directory: directory), now: { clock.now }),
                origin: other)
            #expect(second.unreachableOrigins.map(\.origin) == ["http://site.test:80"])
            await #expect(throws: CacheError.self) { try await Self.get(second) }
            #expect(other.attempts == 0)
            #expect(
                try second.explain(HTTPRequest(method: .get, url: Self.page)).contains {
                    $0.hasPrefix("origin: http://site.test:80 unreachable")
                })
        }
    }

    @Test("other origins are not affected")
    func perOrigin() async throws {
        try await Self.run { cache, origin, _, _ in
            await #expect(throws: CacheError.self) { try await Self.get(cache) }
            await #expect(throws: CacheError.self) { try await Self.get(cache, URL(string: "https://site.test/page")!) }
            await #expect(throws: CacheError.self) {
                try await Self.get(cache, URL(string: "http://site.test:8080/page")!)
            }
            #expect(origin.attempts == 3)
            #expect(cache.unreachableOrigins.count == 3)
        }
    }

    @Test("past maximumOrigins, the origin due to be tried soonest is forgotten, in memory and in the store")
    func boundedOrigins() async throws {
        try await Self.run(reachability: ReachabilitySettings(maximumOrigins: 3)) { cache, origin, clock, _ in
            let site = { (number: Int) in URL(string: "http://site\(number).test/page")! }
            for number in 0..<5 {
                await #expect(throws: CacheError.self) { try await Self.get(cache, site(number)) }
                clock.advance(0.1)
            }
            let kept = ["http://site2.test:80", "http://site3.test:80", "http://site4.test:80"]
            #expect(cache.unreachableOrigins.map(\.origin) == kept)
            let remembered = try cache.store.originStatuses()
            #expect(remembered.map(\.origin).sorted() == kept)
            // A forgotten origin is tried again at once; a remembered one is still skipped.
            await #expect(throws: CacheError.self) { try await Self.get(cache, site(0)) }
            #expect(origin.attempts == 6)
            await #expect(throws: CacheError.self) { try await Self.get(cache, site(4)) }
            #expect(origin.attempts == 6)
        }
    }

    @Test("a store remembering more origins than maximumOrigins is read back to the latest of them")
    func boundedWhenRemembered() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let clock = TestClock()
        let store = try CacheStore(configuration: .init(directory: directory.url))
        for number in 0..<5 {
            try store.saveOriginStatus(
                OriginStatus(
                    origin: "http://site\(number).test:80", failures: 1, unreachableSince: clock.now,
                    retryAfter: clock.now.addingTimeInterval(Double(10 + number)), lastError: "refused"))
        }
        var configuration = HTTPCache.Configuration(
            store: CacheStore.Configuration(directory: directory.url), now: { clock.now })
        configuration.reachability = ReachabilitySettings(maximumOrigins: 2)
        let cache = try HTTPCache(configuration: configuration, origin: ScriptedOrigin())
        #expect(cache.unreachableOrigins.map(\.origin) == ["http://site3.test:80", "http://site4.test:80"])
    }

    @Test("turned off, every request tries the origin")
    func turnedOff() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let origin = ScriptedOrigin()
        var configuration = HTTPCache.Configuration(directory: directory.url)
        configuration.reachability = nil
        let cache = try HTTPCache(configuration: configuration, origin: origin)
        for _ in 0..<3 { await #expect(throws: CacheError.self) { try await Self.get(cache) } }
        #expect(origin.attempts == 3)
        #expect(cache.unreachableOrigins.isEmpty)
    }
}
