import Foundation
import HTTPTypes
import Testing
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheStore
import WebCacheTestSupport

@Suite("streamingResponse reads a large stored body from its file, a chunk at a time")
struct StoredBodyStreamingTests {
    static let body = Fixtures.bytes(3_000_000) { UInt8(truncatingIfNeeded: $0 &* 13) }

    /// Stores ``body`` at `/big`, then runs `check` with another cache on the same directory
    /// (whose memory holds no body: it reads the file, as a new process does).
    static func withStoredBody(
        corrupting: Bool = false, _ check: (HTTPCache, EngineHarness) async throws -> Void
    ) async throws {
        try await EngineHarness.run { h in
            h.origin.route("/big") { _ in
                TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: Self.body)
            }
            _ = try await h.get("/big")
            await h.cache.waitForBackgroundWork()
            if corrupting { try h.corruptBodyFile(at: 2_000_000) }
            try await h.withAnotherCache(after: ["/big"]) { other in try await check(other, h) }
        }
    }

    @Test("a 3 MB hit arrives in chunks of the file, whole and unchanged, twice")
    func chunks() async throws {
        try await Self.withStoredBody { cache, h in
            let response = try await cache.streamingResponse(for: HTTPRequest(method: .get, url: h.origin.url("/big")))
            #expect(response.cacheStatus.hit)
            #expect(response.body.completeBody == nil, "the body was read into memory")
            for _ in 0..<2 {
                var chunks = 0
                var received = Data()
                for try await chunk in response.body {
                    chunks += 1
                    #expect(chunk.count <= 256 << 10)
                    received.append(chunk)
                }
                #expect(chunks >= 12)
                #expect(byteDifference(received, Self.body) == nil)
            }
            #expect(byteDifference(try await response.body.collect(), Self.body) == nil)
            #expect(h.origin.count("/big") == 1)
        }
    }

    @Test("a corrupt stored body is found before the answer: it is removed and the origin answers")
    func corrupt() async throws {
        try await Self.withStoredBody(corrupting: true) { cache, h in
            let response = try await cache.streamingResponse(for: HTTPRequest(method: .get, url: h.origin.url("/big")))
            #expect(!response.cacheStatus.hit)
            #expect(byteDifference(try await response.body.collect(), Self.body) == nil)
            #expect(cache.counters.storeProblems >= 1)
            #expect(h.origin.count("/big") == 2)
            let counters = cache.counters
            #expect(counters.requests == 1 && counters.hits == 0 && counters.misses == 1, "\(counters)")
            #expect(counters.bytesFromCache == 0)
        }
    }

    @Test(
        "for the proxy, a stored body not yet checked in this process is checked a chunk at a time and sent from its file"
    )
    func proxyAnswerFromTheFile() async throws {
        try await Self.withStoredBody { cache, h in
            let url = h.origin.url("/big")
            for range in [nil, "bytes=1000000-1999999"] {
                var request = HTTPRequest(method: .get, url: url)
                request.headerFields[.range] = range
                guard
                    case .built(let answer)? = cache.storedAnswer(
                        for: request, url: url, bodyFilesFrom: 64 << 10, sharing: { _ in false })
                else {
                    Issue.record("no answer from the store")
                    return
                }
                guard let sent = answer.storedFile?.range else {
                    Issue.record("the body was read into memory")
                    return
                }
                #expect(sent == (range == nil ? 0..<Self.body.count : 1_000_000..<2_000_000))
            }
        }
    }

    @Test(
        "for the proxy, a corrupt stored body is found before it is sent: removed, and the request goes to the origin")
    func proxyAnswerCorrupt() async throws {
        try await Self.withStoredBody(corrupting: true) { cache, h in
            let url = h.origin.url("/big")
            let answer = cache.storedAnswer(
                for: HTTPRequest(method: .get, url: url), url: url, bodyFilesFrom: 64 << 10, sharing: { _ in false })
            guard case .origin? = answer else {
                Issue.record("answered from a corrupt body")
                return
            }
            #expect(cache.counters.storeProblems >= 1)
        }
    }

    @Test("small bodies, ranges and HEAD are answered from memory as before")
    func notStreamed() async throws {
        try await Self.withStoredBody { cache, h in
            var range = HTTPRequest(method: .get, url: h.origin.url("/big"))
            range.headerFields[.range] = "bytes=100-199"
            let ranged = try await cache.streamingResponse(for: range)
            #expect(ranged.head.status.code == 206)
            #expect(ranged.body.completeBody == Self.body.subdata(in: 100..<200))
            let head = try await cache.streamingResponse(for: HTTPRequest(method: .head, url: h.origin.url("/big")))
            #expect(head.body.completeBody?.isEmpty == true)
        }
    }
}
