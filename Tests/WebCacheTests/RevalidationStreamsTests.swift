import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing
import WebCache
import WebCacheTestSupport

/// A revalidation the origin answers with a new response (the page changed, a `no-cache` video
/// was replaced) streams that response as a miss does: the caller gets its first bytes while the
/// rest is on its way, the store takes it as it comes, and a large body is never held whole.
@Suite("A revalidation's new response streams as it arrives")
struct RevalidationStreamsTests {
    static let body = Fixtures.bytes(400_000) { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }

    /// `/page`, validated on every use: `"1"` (a small body) until `changed` is set, then `"2"`
    /// (``body``, its first 300,000 bytes at once and the rest once `rest` opens), with 304s for a
    /// current `If-None-Match`; `"2"` is sent with `cacheControl`, after `delay`.
    static func routeChangingPage(
        _ origin: TestOrigin, changed: NIOLockedValueBox<Bool>, rest: OriginGate? = nil,
        cacheControl: String = "no-cache", delay: Duration = .zero
    ) {
        origin.route("/page") { request in
            let tag = changed.withLockedValue { $0 } ? "\"2\"" : "\"1\""
            if request.header("If-None-Match") == tag {
                return TestOrigin.Response(status: 304, headers: [("ETag", tag)])
            }
            guard tag == "\"2\"" else {
                return .text("first", headers: [("Cache-Control", "no-cache"), ("ETag", tag)])
            }
            var response = TestOrigin.Response(
                headers: [("Cache-Control", cacheControl), ("ETag", tag)], body: Self.body, delay: delay)
            if let rest {
                response.pauseAfter = 300_000  // past the bytes a new response answers after
                response.pauseUntil = rest
            }
            return response
        }
    }

    @Test("the first bytes of a changed response come before the rest, and it is stored for the next validation")
    func firstBytesEarly() async throws {
        try await EngineHarness.run { h in
            let changed = NIOLockedValueBox(false)
            let rest = OriginGate()
            Self.routeChangingPage(h.origin, changed: changed, rest: rest)
            #expect(try await h.get("/page").text == "first")
            changed.withLockedValue { $0 = true }
            let request = HTTPRequest(method: .get, url: h.origin.url("/page"))
            let (early, response, body) = try await PassingThroughStreamsTests.firstBytesBeforeTheRest(
                h, request, rest: rest)
            #expect(early, "nothing reached the caller before the origin sent the rest")
            #expect(response.cacheStatus.forward == .stale && response.cacheStatus.forwardStatus == 200)
            #expect(response.cacheStatus.stored)
            #expect(byteDifference(body, Self.body) == nil)
            await h.cache.waitForBackgroundWork()
            let again = try await h.get("/page")
            let bodyAgain = again.body
            #expect(byteDifference(bodyAgain, Self.body) == nil, "the new response was stored whole as it streamed")
            #expect(again.statusLine.contains("fwd-status=304"))
            #expect(h.origin.requests(to: "/page").last?.header("If-None-Match") == "\"2\"")
        }
    }

    @Test("HEAD that finds the resource changed gets no body, and the new body is stored all the same")
    func head() async throws {
        try await EngineHarness.run { h in
            let changed = NIOLockedValueBox(false)
            Self.routeChangingPage(h.origin, changed: changed)
            _ = try await h.get("/page")
            changed.withLockedValue { $0 = true }
            let head = try await h.send(.head, "/page")
            #expect(head.head.status.code == 200 && head.body.isEmpty)
            #expect(head.head.headerFields[.eTag] == "\"2\"")
            await h.cache.waitForBackgroundWork()
            let again = try await h.get("/page")
            let bodyAgain = again.body
            #expect(byteDifference(bodyAgain, Self.body) == nil)
            #expect(again.statusLine.contains("fwd-status=304"))
        }
    }

    @Test("requests validating together share a new response the cache stores fresh, each reading all of it")
    func sharedWhenStored() async throws {
        try await EngineHarness.run { h in
            let changed = NIOLockedValueBox(false)
            Self.routeChangingPage(h.origin, changed: changed, cacheControl: "max-age=600", delay: .milliseconds(300))
            _ = try await h.get("/page")
            changed.withLockedValue { $0 = true }
            let bodies = try await Self.concurrentBodies(h, count: 4)
            #expect(bodies.allSatisfy { $0 == Self.body })
            #expect(h.origin.count("/page") == 2, "one validation for the four")
        }
    }

    @Test(
        "a new response the cache may not reuse unvalidated (no-store, no-cache) is not shared: each request validates for itself",
        arguments: ["no-store", "no-cache"])
    func notSharedUnlessReusable(cacheControl: String) async throws {
        try await EngineHarness.run { h in
            let changed = NIOLockedValueBox(false)
            Self.routeChangingPage(h.origin, changed: changed, cacheControl: cacheControl, delay: .milliseconds(300))
            _ = try await h.get("/page")
            changed.withLockedValue { $0 = true }
            let bodies = try await Self.concurrentBodies(h, count: 3)
            #expect(bodies.allSatisfy { $0 == Self.body })
            #expect(h.origin.count("/page") == 4, "the first fetch, then one validation per request")
        }
    }

    @Test("a new response cut short past its first bytes fails its reader instead of ending as if whole")
    func cutShort() async throws {
        try await EngineHarness.run { h in
            try await Self.storeThenCut(h, firstCacheControl: "no-cache", cutAfter: 300_000)
            let response: StreamingCacheResponse
            do {
                response = try await h.cache.streamingResponse(
                    for: HTTPRequest(method: .get, url: h.origin.url("/page")))
            } catch {
                // The cut can be known before the first bytes are counted in (the end of the
                // connection, on a loaded machine): the exchange failed, which is no whole body either.
                return
            }
            #expect(response.head.headerFields[.eTag] == "\"2\"")
            var received = 0
            await #expect(throws: (any Error).self) {
                for try await chunk in response.body { received += chunk.count }
            }
            #expect(received <= 300_000)
        }
    }

    @Test("a new response cut short within its first bytes is a failed exchange: stale-if-error serves the stored copy")
    func cutEarly() async throws {
        try await EngineHarness.run { h in
            try await Self.storeThenCut(h, firstCacheControl: "max-age=1, stale-if-error=600", cutAfter: 50_000)
            h.clock.advance(10)
            let answer = try await h.get("/page")
            #expect(answer.text == "first")
            #expect(answer.statusLine.contains("detail=stale-if-error"))
        }
    }

    /// Stores `/page` (`"1"`, sent with `firstCacheControl`), then has the origin answer it with
    /// a new response (`"2"`, ``body``) cut after `cutAfter` bytes.
    static func storeThenCut(_ h: EngineHarness, firstCacheControl: String, cutAfter: Int) async throws {
        let changed = NIOLockedValueBox(false)
        h.origin.route("/page") { _ in
            guard changed.withLockedValue({ $0 }) else {
                return .text("first", headers: [("Cache-Control", firstCacheControl), ("ETag", "\"1\"")])
            }
            var response = TestOrigin.Response(
                headers: [("Cache-Control", "no-cache"), ("ETag", "\"2\"")], body: Self.body)
            response.cutAfter = cutAfter
            return response
        }
        _ = try await h.get("/page")
        changed.withLockedValue { $0 = true }
    }

    /// The bodies `count` concurrent GETs of `/page` read.
    static func concurrentBodies(_ h: EngineHarness, count: Int) async throws -> [Data] {
        try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<count { group.addTask { try await h.get("/page").body } }
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }
    }
}
