import Foundation
import HTTPTypes
import Testing
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheStore
import WebCacheTestSupport

@Suite("Store trouble under a request is counted, logged and survived")
struct StoreProblemTests {
    @Test("a corrupt body file: the request is answered from the origin, the problem counted and shown by stats")
    func corruptBody() async throws {
        try await EngineHarness.run { h in
            let body = Data(repeating: 0x62, count: 100_000)
            h.origin.route("/big") { _ in TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: body) }
            _ = try await h.get("/big")
            try h.corruptBodyFile(at: 500)
            // Another cache on the directory verifies the body on its first read.
            try await h.withAnotherCache(after: ["/big"]) { other in
                let answer = try await other.response(for: HTTPRequest(method: .get, url: h.origin.url("/big")))
                #expect(byteDifference(answer.body, body) == nil)
                #expect(answer.statusLine.contains("fwd=miss"), "\(answer.statusLine)")
                #expect(other.counters.storeProblems == 1)
                #expect(h.origin.count("/big") == 2)
                other.persistCounters()
                #expect(try other.store.counters()["storeProblems"] == 1)
            }
        }
    }
}
