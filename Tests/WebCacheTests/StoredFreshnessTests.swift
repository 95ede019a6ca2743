import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

/// Whether an app's default lifetime applies is decided from the head that is stored, which is
/// not always the head that came: storing leaves out fields the directives name, and the app's
/// `willCache` hook may change it. (The response's directives are parsed once for storing and
/// for its freshness when nothing changed.)
@Suite("Engine: a default lifetime follows the stored head")
struct StoredFreshnessTests {
    static let policy = CachePolicy(lifetimes: [.init(defaultTTL: 600)])

    @Test("a max-age that no-cache=\"Cache-Control\" leaves out is not there: the default lifetime applies")
    func omittedCacheControl() async throws {
        try await EngineHarness.run(policy: Self.policy) { h in
            h.origin.route("/page") { _ in
                .text("page", headers: [("Cache-Control", "max-age=5, no-cache=\"Cache-Control\"")])
            }
            _ = try await h.get("/page")
            h.clock.advance(60)
            let later = try await h.get("/page")
            #expect(later.isFromCache, "stored without Cache-Control: fresh for the default 600 s")
            #expect(h.origin.count("/page") == 1)
        }
    }

    @Test(
        "a Cache-Control the willCache hook sets decides whether the default lifetime applies",
        arguments: [(nil, "max-age=5", 2), ("max-age=5", nil, 1)] as [(String?, String?, Int)])
    func hookCacheControl(sent: String?, stored: String?, originRequests: Int) async throws {
        try await EngineHarness.run(
            policy: Self.policy,
            adjust: { configuration in
                configuration.willCache = { _, response in
                    var changed = response
                    changed.headerFields[.cacheControl] = stored
                    return changed
                }
            }
        ) { h in
            h.origin.route("/page") { _ in .text("page", headers: sent.map { [("Cache-Control", $0)] } ?? []) }
            _ = try await h.get("/page")
            h.clock.advance(60)
            _ = try await h.get("/page")
            #expect(h.origin.count("/page") == originRequests)
        }
    }
}
