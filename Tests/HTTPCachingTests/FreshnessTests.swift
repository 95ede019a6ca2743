import HTTPCaching
import Testing
import WebCacheTestSupport

@Suite("Freshness lifetime (RFC 9111 §4.2.1, §4.2.2)")
struct FreshnessTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let headers: [String]
        var status = 200
        var kind: CacheKind = .private
        let lifetime: Int
        let rule: String
        var testDescription: String { "\(kind) \(status) \(headers) → \(lifetime) s (\(rule))" }
    }

    static let rows: [Row] = [
        .init(headers: ["Cache-Control: max-age=3600"], lifetime: 3600, rule: "§4.2.1 max-age"),
        .init(
            headers: ["Cache-Control: max-age=3600", "Expires: @-7200", "Date: @0"], lifetime: 3600,
            rule: "§4.2.1 max-age over Expires"),
        .init(
            headers: ["Cache-Control: max-age=3600", "Expires: 0", "Date: @0"], lifetime: 3600,
            rule: "§4.2.1 invalid Expires ignored beside max-age"),
        .init(
            headers: ["Cache-Control: max-age=0", "Expires: @3600", "Date: @0"], lifetime: 0,
            rule: "§4.2.1 max-age=0 over Expires"),
        .init(
            headers: ["Cache-Control: s-maxage=3600, max-age=1"], lifetime: 1,
            rule: "§5.2.2.10 s-maxage ignored by a private cache"),
        .init(
            headers: ["Cache-Control: s-maxage=3600", "Cache-Control: max-age=1"], lifetime: 1,
            rule: "§5.2.2.10 private cache, two lines"),
        .init(
            headers: ["Cache-Control: max-age=3600, s-maxage=1"], kind: .shared, lifetime: 1,
            rule: "§4.2.1 shared: s-maxage first"),
        .init(
            headers: ["Cache-Control: max-age=1, s-maxage=3600"], kind: .shared, lifetime: 3600,
            rule: "§4.2.1 shared: longer s-maxage"),
        .init(
            headers: ["Expires: @-10", "Cache-Control: max-age=0, s-maxage=3600"], kind: .shared, lifetime: 3600,
            rule: "§4.2.1 shared: s-maxage over Expires"),
        .init(headers: ["Cache-Control: max-age=-3600"], lifetime: 0, rule: "§4.2.1 invalid max-age is stale"),
        .init(headers: ["Cache-Control: max-age=99999999999"], lifetime: 2_147_483_648, rule: "§1.2.2 capped"),
        .init(headers: ["Expires: @2592000", "Date: @0"], lifetime: 2_592_000, rule: "§4.2.1 Expires − Date"),
        .init(headers: ["Expires: @-2592000", "Date: @0"], lifetime: 0, rule: "§4.2.1 past Expires"),
        .init(headers: ["Expires: @300", "Date: @400"], lifetime: 0, rule: "§4.2.1 Expires before Date"),
        .init(headers: ["Expires: @10", "Date: foo"], lifetime: 10, rule: "§4.2.1 invalid Date: receipt time instead"),
        .init(headers: ["Expires: 0", "Date: @0"], lifetime: 0, rule: "§5.3 invalid Expires means expired"),
        .init(headers: ["Expires: Thu, 18 Aug 2050 02:01:18 UTC", "Date: @0"], lifetime: 0, rule: "§5.3 invalid zone"),
        .init(
            headers: ["Expires: @100", "Expires: @200", "Date: @0"], lifetime: 0,
            rule: "§4.2.1 conflicting Expires lines: stale"),
        .init(
            headers: ["Expires: @100", "Expires: @100", "Date: @0"], lifetime: 100,
            rule: "§4.2.1 identical Expires lines"),
        .init(headers: ["Last-Modified: @-86400", "Date: @0"], lifetime: 8640, rule: "§4.2.2 10% heuristic"),
        .init(
            headers: ["Last-Modified: @-8640000", "Date: @0"], lifetime: 86400, rule: "§4.2.2 heuristic capped at a day"
        ),
        .init(
            headers: ["Last-Modified: @-86400", "Date: @0"], status: 404, lifetime: 8640,
            rule: "RFC 9110 §15.1 404 heuristically cacheable"),
        .init(
            headers: ["Last-Modified: @-86400", "Date: @0"], status: 201, lifetime: 0, rule: "RFC 9110 §15.1 201 is not"
        ),
        .init(
            headers: ["Last-Modified: @-86400", "Date: @0"], status: 503, lifetime: 0, rule: "RFC 9110 §15.1 503 is not"
        ),
        .init(
            headers: ["Last-Modified: @-86400", "Date: @0", "Cache-Control: public"], status: 599, lifetime: 8640,
            rule: "§4.2.2 public allows heuristics"),
        .init(headers: ["Last-Modified: @86400", "Date: @0"], lifetime: 0, rule: "§4.2.2 Last-Modified in the future"),
        .init(headers: ["Last-Modified: garbage", "Date: @0"], lifetime: 0, rule: "§4.2.2 invalid Last-Modified"),
        .init(headers: ["ETag: \"x\""], lifetime: 0, rule: "§4.2.2 no Last-Modified, no heuristic"),
        .init(
            headers: ["Expires: @-100", "Last-Modified: @-100000", "Date: @0"], lifetime: 0,
            rule: "§4.2.2 never a heuristic beside Expires"),
    ]

    @Test(arguments: rows)
    func lifetime(_ row: Row) {
        let rules = CacheRules(kind: row.kind)
        #expect(rules.freshness(of: Fixtures.stored(status: row.status, row.headers)).lifetime == row.lifetime)
    }

    @Test("sources are reported for explanations")
    func sources() {
        let rules = CacheRules(kind: .shared)
        #expect(rules.freshness(of: Fixtures.stored(["Cache-Control: s-maxage=5"])).source == .sharedMaxAge)
        #expect(rules.freshness(of: Fixtures.stored(["Cache-Control: max-age=5"])).source == .maxAge)
        #expect(rules.freshness(of: Fixtures.stored(["Expires: @5", "Date: @0"])).source == .expires)
        #expect(rules.freshness(of: Fixtures.stored(["Last-Modified: @-50", "Date: @0"])).isHeuristic)
        #expect(rules.freshness(of: Fixtures.stored([])).source == .none)
        #expect(rules.freshness(of: Fixtures.stored(["Cache-Control: max-age=5"])).description == "max-age=5")
    }

    @Test("the freshness left is the opposite of the reuse decision's staleness", arguments: rows)
    func freshnessLeft(_ row: Row) {
        let rules = CacheRules(kind: row.kind)
        for stored in [
            Fixtures.stored(status: row.status, row.headers),
            Fixtures.stored(status: row.status, row.headers + ["Age: 100"]),
        ] {
            for later in [0.0, 1.5, 5000] {
                let now = stored.responseTime.addingTimeInterval(later)
                let staleness = rules.reuse(stored, for: Fixtures.request(), now: now).staleness
                #expect(rules.freshnessLeft(of: stored, at: now) == -staleness)
            }
        }
    }

    @Test("heuristics can be tuned or disabled")
    func tunedHeuristic() {
        let stored = Fixtures.stored(["Last-Modified: @-1000", "Date: @0"])
        #expect(
            CacheRules(kind: .private, heuristic: .init(fraction: 0.5, maximum: 300)).freshness(of: stored).lifetime
                == 300)
        #expect(CacheRules(kind: .private, heuristic: .disabled).freshness(of: stored).lifetime == 0)
    }
}
