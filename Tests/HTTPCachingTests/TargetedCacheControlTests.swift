import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Targeted cache-control fields (RFC 9213)")
struct TargetedCacheControlTests {
    let cdn = CacheRules.shared

    @Test("a valid CDN-Cache-Control replaces Cache-Control and Expires (§2.2)")
    func replaces() {
        let stored = Fixtures.stored([
            "Cache-Control: max-age=1", "CDN-Cache-Control: max-age=3600", "Expires: @-10", "Date: @0",
        ])
        let freshness = cdn.freshness(of: stored)
        #expect(freshness.lifetime == 3600)
        #expect(freshness.field == "CDN-Cache-Control")
        #expect(CacheRules(kind: .shared).freshness(of: stored).lifetime == 1)
    }

    @Test("CDN-Cache-Control: max-age=1 beats a long Cache-Control (§2.2)")
    func shortTargeted() {
        let stored = Fixtures.stored(["Cache-Control: max-age=3600", "CDN-Cache-Control: max-age=1"])
        #expect(cdn.freshness(of: stored).lifetime == 1)
    }

    @Test("CDN-Cache-Control: max-age with Cache-Control: no-store is storable (§2.2)")
    func overridesNoStore() {
        let response = Fixtures.response(200, ["Cache-Control: no-store", "CDN-Cache-Control: max-age=10000"])
        #expect(cdn.storability(of: response, for: Fixtures.request()).isStorable)
        #expect(!CacheRules(kind: .shared).storability(of: response, for: Fixtures.request()).isStorable)
    }

    struct Row: CustomTestStringConvertible, Sendable {
        let cdn: String
        let storable: Bool
        var testDescription: String { "CDN-Cache-Control: \(cdn) with Cache-Control: no-store" }
    }

    @Test(
        "invalid Structured Fields are ignored as a whole",
        arguments: [
            Row(cdn: "max-age=10000, &&&&&", storable: false),
            Row(cdn: "max-age=\"10000\"", storable: false),
            Row(cdn: "max-age=-5", storable: false),
            Row(cdn: "max-age=10000, foobar", storable: true),
            Row(cdn: "no-store", storable: false),
            Row(cdn: "private", storable: false),
            Row(cdn: "", storable: false),
        ])
    func invalidFields(_ row: Row) {
        let response = Fixtures.response(200, ["Cache-Control: no-store", "CDN-Cache-Control: \(row.cdn)"])
        #expect(cdn.storability(of: response, for: Fixtures.request()).isStorable == row.storable)
    }

    @Test("CDN-Cache-Control: no-cache forces validation despite Cache-Control: max-age")
    func noCache() {
        let stored = Fixtures.stored([
            "CDN-Cache-Control: no-cache", "Cache-Control: max-age=10000", "Expires: @10000", "Date: @0",
        ])
        #expect(cdn.reuse(stored, for: Fixtures.request(), now: Fixtures.at(1)).action == .validate)
    }

    @Test("a configured field name is obeyed first, then the next")
    func targetList() {
        let own = HTTPField.Name("WebCache-Cache-Control")!
        let rules = CacheRules(kind: .shared, targetedFields: [own, TargetedCacheControl.cdnCacheControl])
        let both = Fixtures.stored(["WebCache-Cache-Control: max-age=5", "CDN-Cache-Control: max-age=50"])
        #expect(rules.freshness(of: both).lifetime == 5)
        let invalidOwn = Fixtures.stored(["WebCache-Cache-Control: max-age=(", "CDN-Cache-Control: max-age=50"])
        #expect(rules.freshness(of: invalidOwn).lifetime == 50)
    }

    @Test("inner lists and strings name fields for no-cache and private")
    func fieldLists() throws {
        let parsed = try #require(TargetedCacheControl.parse("no-cache=(\"set-cookie\" \"x-a\"), max-age=60"))
        #expect(parsed.noCache == .fields(["set-cookie", "x-a"]))
        #expect(parsed.maxAge == .seconds(60))
    }
}
