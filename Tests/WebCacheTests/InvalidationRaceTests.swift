import Foundation
import Testing
import WebCache
import WebCacheTestSupport

/// RFC 9111 §4.4: a successful unsafe request invalidates its target. A GET whose response was
/// still arriving when that happened may carry the representation the request changed; it is
/// neither stored nor shared with the requests that come after the invalidation.
@Suite("An unsafe request that overtakes a fetch in flight")
struct InvalidationRaceTests {
    @Test("the GET answered before a POST changed the resource is not stored or shared; later GETs get the new one")
    func postOvertakesAGet() async throws {
        try await EngineHarness.run { h in
            let gate = OriginGate()
            let gets = Counter()
            let posts = Counter()
            h.origin.route("/doc") { request in
                if request.method == "POST" {
                    _ = posts.next()
                    return .text("posted")
                }
                var response = TestOrigin.Response.text(
                    "version \(posts.value + 1) of the document", headers: [("Cache-Control", "max-age=3600")])
                if gets.next() == 1 {
                    // The first GET's head and a few bytes go out; the rest waits for the gate.
                    response.pauseAfter = 4
                    response.pauseUntil = gate
                }
                return response
            }
            async let first = h.get("/doc")
            await gate.arrivals(1)  // the first GET's response is on its way, held at the origin

            let posted = try await h.send(.post, "/doc", body: Data("edit".utf8))
            #expect(posted.text == "posted")

            // Asked for after the invalidation, while the first GET's body is still held: not a
            // share of the fetch that began before it, but a request of its own. (A share would
            // wait for the gate: it opens once the origin has the request, or after two seconds,
            // so that a share fails the test rather than hanging it.)
            async let asked = h.get("/doc")
            for _ in 0..<200 where h.origin.count("/doc") < 3 {
                try await Task.sleep(for: .milliseconds(10))
            }
            gate.open()
            let during = try await asked
            #expect(during.text == "version 2 of the document")
            #expect(!during.statusLine.contains("collapsed"))

            let answered = try await first
            #expect(answered.text == "version 1 of the document", "the first GET gets the response to its request")
            await h.cache.waitForBackgroundWork()

            let after = try await h.get("/doc")
            #expect(after.text == "version 2 of the document")
            #expect(h.origin.requests(to: "/doc").map(\.method) == ["GET", "POST", "GET"])
            #expect(h.cache.counters.storeProblems == 0, "a response not stored for this reason is no store problem")
        }
    }
}
