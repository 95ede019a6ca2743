import Foundation
import Testing
import WebCache
import WebCacheTestSupport

@Suite("POST responses that name themselves answer later GETs (RFC 9110 §9.3.3)")
struct PostReuseTests {
    @Test(
        "with Content-Location equal to the target and explicit freshness, the POST response is stored for GET; otherwise not"
    )
    func postThenGet() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            h.origin.route("/form") { request in
                request.method == "POST"
                    ? .text("posted", headers: [("Cache-Control", "max-age=3600"), ("Content-Location", "/form")])
                    : .text("from GET", headers: [("Cache-Control", "max-age=3600")])
            }
            h.origin.route("/other") { request in
                request.method == "POST"
                    ? .text("posted", headers: [("Cache-Control", "max-age=3600")]) : .text("from GET")
            }
            let posted = try await h.send(
                .post, "/form", body: Data("a=1".utf8), ["Content-Type: application/x-www-form-urlencoded"])
            #expect(posted.text == "posted" && posted.statusLine.contains("stored"))
            let get = try await h.get("/form")
            #expect(get.text == "posted" && get.isFromCache)
            #expect(h.origin.requests(to: "/form").map(\.method) == ["POST"])

            _ = try await h.send(.post, "/other", body: Data("a=1".utf8))
            let other = try await h.get("/other")
            #expect(other.text == "from GET" && !other.isFromCache)
        }
    }
}
