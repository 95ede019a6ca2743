import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Reuse decision (RFC 9111 §4, §5.2; RFC 5861; RFC 8246)")
struct ReuseDecisionTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let response: [String]
        var status = 200
        var storedRequest: [String] = []
        var request: [String] = []
        var method: HTTPRequest.Method = .get
        /// Seconds after the response was received.
        let after: Int
        var kind: CacheKind = .private
        var offline = false
        var maxStaleOffline: Int?
        let action: ReuseDecision.Action
        let rule: String
        var testDescription: String { "\(rule): \(response) req \(request) +\(after)s → \(action)" }
    }

    static let rows: [Row] = [
        // Freshness from the response (§4.2)
        .init(response: ["Cache-Control: max-age=3600"], after: 10, action: .useFresh, rule: "§4.2 fresh max-age"),
        .init(
            response: ["Cache-Control: max-age=2", "Date: @0"], after: 3, action: .validate, rule: "§4.2 stale max-age"),
        .init(
            response: ["Cache-Control: max-age=2"], after: 2, action: .validate,
            rule: "§4.2 age equal to lifetime is stale"),
        .init(response: ["Cache-Control: max-age=0"], after: 0, action: .validate, rule: "§4.2 max-age=0"),
        .init(
            response: ["Date: @0", "Cache-Control: max-age=3600", "Age: 7200"], after: 0, action: .validate,
            rule: "§4.2.3 Age beyond max-age"),
        .init(
            response: ["Date: @-7200", "Cache-Control: max-age=3600"], after: 0, action: .validate,
            rule: "§4.2.3 apparent age from Date"),
        .init(
            response: ["Date: @0", "Cache-Control: max-age=3600", "Age: abc"], after: 0, action: .useFresh,
            rule: "§5.1 invalid Age ignored"),
        .init(
            response: ["Date: @0", "Cache-Control: max-age=3600", "Age: 2147483648"], after: 0, action: .validate,
            rule: "§5.1 huge Age"),
        .init(
            response: ["Date: @-10", "Expires: @10", "Age: 25"], after: 0, action: .validate,
            rule: "§4.2.3 Age beyond Expires − Date (slow Date)"),
        .init(
            response: ["Date: @10", "Expires: @20", "Age: 15"], after: 0, action: .validate,
            rule: "§4.2.3 Age beyond Expires − Date (fast Date)"),
        .init(response: ["Cache-Control: max-age=2147483648"], after: 100_000, action: .useFresh, rule: "§1.2.2 2^31"),
        .init(
            response: ["Last-Modified: @-86400", "Date: @0"], after: 100, action: .useFresh, rule: "§4.2.2 heuristic"),
        .init(
            response: ["Last-Modified: @-86400", "Date: @0"], after: 9000, action: .validate,
            rule: "§4.2.2 heuristic expired"),
        .init(response: [], after: 0, action: .validate, rule: "§4.2.2 nothing to go on"),
        // no-cache, must-revalidate and friends (§5.2.2)
        .init(
            response: ["Cache-Control: max-age=10000, no-cache", "Expires: @10000", "Date: @0"], after: 1,
            action: .validate, rule: "§5.2.2.4 no-cache"),
        .init(
            response: ["Cache-Control: max-age=10000, No-CaChE"], after: 1, action: .validate,
            rule: "§5.2.2.4 no-cache, any case"),
        .init(
            response: ["Cache-Control: max-age=10000, no-cache=\"a\""], after: 1, action: .useFresh,
            rule: "§5.2.2.4 qualified no-cache: fields dropped instead"),
        .init(
            response: ["Cache-Control: max-age=10000, must-revalidate"], after: 1, action: .useFresh,
            rule: "§5.2.2.2 fresh must-revalidate"),
        .init(
            response: ["Cache-Control: max-age=2, must-revalidate"], request: ["Cache-Control: max-stale"], after: 5,
            action: .validate, rule: "§5.2.2.2 beats max-stale"),
        .init(
            response: ["Cache-Control: max-age=2, must-revalidate"], after: 5, offline: true, action: .validate,
            rule: "§4.2.4 must-revalidate even offline"),
        .init(
            response: ["Cache-Control: max-age=2, proxy-revalidate"], after: 5, kind: .shared, offline: true,
            action: .validate, rule: "§5.2.2.8 proxy-revalidate in a shared cache"),
        .init(
            response: ["Cache-Control: max-age=2, proxy-revalidate"], after: 5, offline: true,
            action: .useStale(.disconnected), rule: "§5.2.2.8 a private cache ignores proxy-revalidate"),
        .init(
            response: ["Cache-Control: max-age=2, s-maxage=2"], after: 5, kind: .shared, offline: true,
            action: .validate, rule: "§5.2.2.10 s-maxage implies proxy-revalidate"),
        .init(
            response: ["Cache-Control: max-age=2, no-cache"], after: 5, offline: true, action: .validate,
            rule: "§4.2.4 no-cache even offline"),
        .init(
            response: ["Cache-Control: max-age=2"], after: 5, offline: true, action: .useStale(.disconnected),
            rule: "§4.2.4 disconnected"),
        .init(
            response: ["Cache-Control: max-age=2"], after: 500, offline: true, maxStaleOffline: 100, action: .validate,
            rule: "offline staleness limit"),
        .init(
            response: ["Cache-Control: max-age=2"], after: 50, offline: true, maxStaleOffline: 100,
            action: .useStale(.disconnected), rule: "offline staleness within limit"),
        // Request directives (§5.2.1)
        .init(
            response: ["Cache-Control: max-age=3600"], request: ["Cache-Control: no-cache"], after: 1,
            action: .validate, rule: "§5.2.1.4 request no-cache"),
        .init(
            response: ["Cache-Control: max-age=3600"], request: ["Pragma: no-cache"], after: 1, action: .validate,
            rule: "§5.4 Pragma: no-cache"),
        .init(
            response: ["Cache-Control: max-age=100000"], request: ["Cache-Control: max-age=0"], after: 1,
            action: .validate, rule: "§5.2.1.1 request max-age=0"),
        .init(
            response: ["Cache-Control: max-age=100000", "Age: 1800"], request: ["Cache-Control: max-age=600"], after: 0,
            action: .validate, rule: "§5.2.1.1 older than request max-age"),
        .init(
            response: ["Cache-Control: max-age=100000"], request: ["Cache-Control: max-age=600"], after: 10,
            action: .useFresh, rule: "§5.2.1.1 within request max-age"),
        .init(
            response: ["Cache-Control: max-age=1500"], request: ["Cache-Control: min-fresh=2000"], after: 0,
            action: .validate, rule: "§5.2.1.3 min-fresh"),
        .init(
            response: ["Cache-Control: max-age=1500", "Age: 1000"], request: ["Cache-Control: min-fresh=1000"],
            after: 0, action: .validate, rule: "§5.2.1.3 min-fresh with Age"),
        .init(
            response: ["Cache-Control: max-age=1500"], request: ["Cache-Control: min-fresh=100"], after: 0,
            action: .useFresh, rule: "§5.2.1.3 fresh enough"),
        .init(
            response: ["Cache-Control: max-age=2"], request: ["Cache-Control: max-stale=1000"], after: 5,
            action: .useStale(.maxStale), rule: "§5.2.1.2 max-stale"),
        .init(
            response: ["Cache-Control: max-age=1500", "Age: 2000"], request: ["Cache-Control: max-stale=1000"],
            after: 0, action: .useStale(.maxStale), rule: "§5.2.1.2 max-stale with Age"),
        .init(
            response: ["Cache-Control: max-age=2"], request: ["Cache-Control: max-stale=1"], after: 10,
            action: .validate, rule: "§5.2.1.2 staler than max-stale"),
        .init(
            response: ["Cache-Control: max-age=2"], request: ["Cache-Control: max-stale"], after: 1_000_000,
            action: .useStale(.maxStale), rule: "§5.2.1.2 max-stale without value"),
        .init(
            response: ["Cache-Control: max-age=2"], request: ["Cache-Control: only-if-cached"], after: 10,
            action: .gatewayTimeout, rule: "§5.2.1.7 only-if-cached, stale"),
        .init(
            response: ["Cache-Control: max-age=60"], request: ["Cache-Control: only-if-cached"], after: 10,
            action: .useFresh, rule: "§5.2.1.7 only-if-cached, fresh"),
        .init(
            response: ["Cache-Control: max-age=2"], request: ["Cache-Control: only-if-cached, max-stale"], after: 10,
            action: .useStale(.maxStale), rule: "§5.2.1.7 only-if-cached with max-stale"),
        // immutable (RFC 8246)
        .init(
            response: ["Cache-Control: max-age=10000, immutable"], request: ["Cache-Control: max-age=0"], after: 5,
            action: .useFresh, rule: "RFC 8246 reload does not revalidate"),
        .init(
            response: ["Cache-Control: max-age=10000, immutable"], request: ["Cache-Control: no-cache"], after: 5,
            action: .validate, rule: "RFC 8246 force reload does"),
        .init(
            response: ["Cache-Control: max-age=2, immutable"], after: 5, action: .validate,
            rule: "RFC 8246 stale immutable is validated"),
        // stale-while-revalidate (RFC 5861 §3)
        .init(
            response: ["Cache-Control: max-age=1, stale-while-revalidate=3600"], after: 5,
            action: .useStale(.staleWhileRevalidate), rule: "RFC 5861 §3 within window"),
        .init(
            response: ["Cache-Control: max-age=1, stale-while-revalidate=4"], after: 6, action: .validate,
            rule: "RFC 5861 §3 after the window"),
        .init(
            response: ["Cache-Control: max-age=1, stale-while-revalidate=60, must-revalidate"], after: 5,
            action: .validate, rule: "must-revalidate beats stale-while-revalidate"),
        .init(
            response: ["Cache-Control: max-age=1, stale-while-revalidate=60"], request: ["Cache-Control: no-cache"],
            after: 5, action: .validate, rule: "request no-cache beats stale-while-revalidate"),
        // Vary and methods (§4.1, §4)
        .init(
            response: ["Cache-Control: max-age=5000", "Vary: Foo"], storedRequest: ["Foo: 1"], request: ["Foo: 1"],
            after: 1, action: .useFresh, rule: "§4.1 Vary matches"),
        .init(
            response: ["Cache-Control: max-age=5000", "Vary: Foo"], storedRequest: ["Foo: 1"], request: ["Foo: 2"],
            after: 1, action: .fetch, rule: "§4.1 Vary mismatch"),
        .init(response: ["Cache-Control: max-age=5000", "Vary: *"], after: 1, action: .fetch, rule: "§4.1 Vary: *"),
        .init(
            response: ["Cache-Control: max-age=5000"], method: .head, after: 1, action: .useFresh,
            rule: "§4 HEAD from a stored GET"),
        .init(
            response: ["Cache-Control: max-age=5000"], method: .post, after: 1, action: .fetch,
            rule: "§4 POST is never served from cache"),
        .init(
            response: ["Cache-Control: max-age=5000"], method: .delete, after: 1, action: .fetch,
            rule: "§4 DELETE is never served from cache"),
    ]

    @Test(arguments: rows)
    func decide(_ row: Row) {
        let rules = CacheRules(kind: row.kind)
        let stored = Fixtures.stored(status: row.status, row.response, request: row.storedRequest)
        let request = Fixtures.request(row.method, "https://example.com/resource", row.request)
        let conditions = ReuseConditions(originReachable: !row.offline, maxStaleWhenDisconnected: row.maxStaleOffline)
        let decision = rules.reuse(stored, for: request, now: Fixtures.at(row.after), conditions: conditions)
        #expect(decision.action == row.action, "\(decision)")
    }

    @Test("stale-if-error allows a stale response when the origin fails, within its window")
    func staleIfError() {
        let rules = CacheRules.private
        let stored = Fixtures.stored(["Cache-Control: max-age=2, stale-if-error=60"])
        let inWindow = rules.reuse(stored, for: Fixtures.request(), now: Fixtures.at(30))
        #expect(inWindow.action == .validate)
        #expect(inWindow.mayServeStaleOnError)
        #expect(!rules.reuse(stored, for: Fixtures.request(), now: Fixtures.at(100)).mayServeStaleOnError)
        let viaRequest = rules.reuse(
            Fixtures.stored(["Cache-Control: max-age=2"]),
            for: Fixtures.request(.get, "https://example.com/resource", ["Cache-Control: stale-if-error=100"]),
            now: Fixtures.at(30))
        #expect(viaRequest.mayServeStaleOnError)
        let forbidden = rules.reuse(
            Fixtures.stored(["Cache-Control: max-age=2, stale-if-error=60, must-revalidate"]), for: Fixtures.request(),
            now: Fixtures.at(30))
        #expect(!forbidden.mayServeStaleOnError)
        #expect(
            !rules.reuse(Fixtures.stored(["Cache-Control: max-age=2"]), for: Fixtures.request(), now: Fixtures.at(30))
                .mayServeStaleOnError)
    }

    @Test("decisions explain themselves in words")
    func explanations() {
        let rules = CacheRules.private
        let fresh = rules.reuse(
            Fixtures.stored(["Cache-Control: max-age=3600", "Date: @0"]), for: Fixtures.request(), now: Fixtures.at(58))
        #expect(fresh.description == "fresh for 3542 s more (max-age=3600, age 58 s)")
        #expect(fresh.age == 58 && fresh.staleness == -3542 && fresh.isFresh && fresh.servesStored)
        let stale = rules.reuse(
            Fixtures.stored(["Cache-Control: max-age=60", "ETag: \"abc\""]), for: Fixtures.request(),
            now: Fixtures.at(102))
        #expect(stale.description.hasPrefix("stale by 42 s (max-age=60, age 102 s)"))
        #expect(!stale.servesStored)
        let vary = rules.reuse(
            Fixtures.stored(["Vary: Accept-Language"], request: ["Accept-Language: en"]), for: Fixtures.request(),
            now: Fixtures.at(0))
        #expect(vary.description.contains("Vary"))
    }
}
