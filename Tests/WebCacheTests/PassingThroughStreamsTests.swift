import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing
import WebCache
import WebCacheTestSupport

/// Responses the cache does not store — requests its policy leaves alone, unsafe methods — go
/// to the client as they arrive, as misses do: a download starts at once, a stream of events
/// flows, and a large body is never held whole.
@Suite("Responses passed through uncached stream as they arrive")
struct PassingThroughStreamsTests {
    static let body = Fixtures.bytes(400_000) { UInt8(truncatingIfNeeded: $0 &* 17 &+ $0 >> 9) }

    /// Sends `request` and reports whether its head and first bytes came while the origin held
    /// the rest (waiting up to 5 s for them), then the whole body once the rest is let go.
    static func firstBytesBeforeTheRest(
        _ h: EngineHarness, _ request: HTTPRequest, rest: OriginGate
    ) async throws -> (early: Bool, response: StreamingCacheResponse, body: Data) {
        let early = NIOLockedValueBox(false)
        let reading = Task {
            let response = try await h.cache.streamingResponse(for: request)
            var body = Data()
            for try await chunk in response.body {
                body.append(chunk)
                early.withLockedValue { $0 = true }
            }
            return (response, body)
        }
        await rest.arrivals(1)
        for _ in 0..<250 where !early.withLockedValue({ $0 }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let arrivedEarly = early.withLockedValue { $0 }
        rest.open()
        let (response, body) = try await reading.value
        return (arrivedEarly, response, body)
    }

    @Test(
        "a GET the policy does not cache (its host is not allowed): the first bytes come before the rest, and nothing is stored"
    )
    func notAllowed() async throws {
        let policy = CachePolicy(allow: .init(hosts: ["allowed.example"]))
        try await EngineHarness.run(policy: policy) { h in
            let rest = h.origin.routeHeldBody("/download", Self.body, sendingFirst: 100_000)
            let request = HTTPRequest(method: .get, url: h.origin.url("/download"))
            let (early, response, body) = try await Self.firstBytesBeforeTheRest(h, request, rest: rest)
            #expect(early, "nothing reached the caller before the origin sent the rest")
            #expect(response.cacheStatus.forward == .bypass)
            #expect(byteDifference(body, Self.body) == nil)
            let again = try await h.get("/download")
            #expect(!again.isFromCache)
            #expect(byteDifference(again.body, Self.body) == nil)
            #expect(h.origin.count("/download") == 2)
        }
    }

    @Test("a POST answered with a stream of events: the first events come before the rest, and the URL is invalidated")
    func post() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/feed") { _ in
                TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: Data("stored".utf8))
            }
            _ = try await h.get("/feed")
            let rest = h.origin.routeHeldBody("/feed", Self.body, sendingFirst: 100_000)
            var request = HTTPRequest(method: .post, url: h.origin.url("/feed"))
            request.headerFields[.contentType] = "application/json"
            let (early, response, body) = try await Self.firstBytesBeforeTheRest(h, request, rest: rest)
            #expect(early, "nothing reached the caller before the origin sent the rest")
            #expect(response.cacheStatus.forward == .method)
            #expect(byteDifference(body, Self.body) == nil)
            let after = try await h.get("/feed")
            #expect(!after.isFromCache, "the POST invalidated the stored GET")
        }
    }

    @Test(
        "a reader cancelled while the origin sends nothing: its wait ends at once, and a body nobody else reads is given up (the origin connection closed)"
    )
    func cancelledReader() async throws {
        try await EngineHarness.run { h in
            let rest = h.origin.routeHeldBody(
                "/feed", Self.body, sendingFirst: 8 << 10, cacheControl: "no-store", chunked: true)
            let (firstChunk, tookFirstChunk) = AsyncStream<Void>.makeStream()
            let reader = Task {
                let response = try await h.cache.streamingResponse(for: HTTPRequest(url: h.origin.url("/feed")))
                var iterator = response.body.makeAsyncIterator()
                _ = try await iterator.next()
                tookFirstChunk.yield()
                while try await iterator.next() != nil {}
            }
            for await _ in firstChunk { break }
            await rest.arrivals(1)
            try await Task.sleep(for: .milliseconds(100))  // the reader waits for the rest
            reader.cancel()
            await #expect(throws: CancellationError.self) { try await reader.value }
            // Well inside the origin client's 10 s limit, which would close it anyway.
            let open = try await h.origin.connectionsOpen(afterWaitingAtMost: .seconds(5))
            rest.open()
            #expect(open == 0, "the origin connection was kept for a body nobody reads")
        }
    }
}
