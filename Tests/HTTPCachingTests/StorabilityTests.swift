import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Storability (RFC 9111 §3)")
struct StorabilityTests {
    struct Row: CustomTestStringConvertible, Sendable {
        var method: HTTPRequest.Method = .get
        var request: [String] = []
        var status = 200
        let response: [String]
        var kind: CacheKind = .private
        let storable: Bool
        let rule: String
        var testDescription: String {
            "\(kind) \(method.rawValue) \(status) \(response) \(request) → \(storable) (\(rule))"
        }
    }

    static let rows: [Row] = [
        .init(response: ["Cache-Control: max-age=3600"], storable: true, rule: "§3 explicit freshness"),
        .init(response: [], storable: true, rule: "§3 200 is heuristically cacheable"),
        .init(status: 201, response: [], storable: false, rule: "§3 201 without freshness"),
        .init(
            status: 201, response: ["Cache-Control: max-age=60"], storable: true,
            rule: "§3 any final status with explicit freshness"),
        .init(status: 599, response: ["Cache-Control: public"], storable: true, rule: "§3 public"),
        .init(status: 100, response: ["Cache-Control: max-age=60"], storable: false, rule: "§3 final responses only"),
        .init(
            status: 304, response: ["Cache-Control: max-age=60"], storable: false,
            rule: "§4.3.4 304 updates, is not stored"),
        .init(
            status: 206, response: ["Cache-Control: max-age=60", "Content-Range: bytes 0-4/10"], storable: false,
            rule: "§3.3 partial content"),
        .init(
            method: .post, response: ["Cache-Control: max-age=60"], storable: false,
            rule: "RFC 9110 §9.3.3 POST without Content-Location"),
        .init(
            method: .post, response: ["Cache-Control: max-age=60", "Content-Location: /resource"], storable: true,
            rule: "RFC 9110 §9.3.3 POST with Content-Location = target"),
        .init(
            method: .post, response: ["Content-Location: /resource"], storable: false,
            rule: "RFC 9110 §9.3.3 POST needs explicit freshness"),
        .init(method: .put, response: ["Cache-Control: max-age=60"], storable: false, rule: "§3 PUT"),
        .init(method: .head, response: ["Cache-Control: max-age=60"], storable: true, rule: "§3 HEAD"),
        .init(response: ["Cache-Control: no-store"], storable: false, rule: "§5.2.2.5"),
        .init(response: ["Cache-Control: No-StOrE"], storable: false, rule: "§5.2.2.5 case-insensitive"),
        .init(
            response: ["Cache-Control: max-age=10000, no-store", "Expires: @10000", "Date: @0"], storable: false,
            rule: "§5.2.2.5 beats freshness"),
        .init(
            request: ["Cache-Control: no-store"], response: ["Cache-Control: max-age=60"], storable: false,
            rule: "§5.2.1.5 request no-store"),
        .init(
            status: 200, response: ["Cache-Control: max-age=3600, no-store, must-understand"], storable: true,
            rule: "§5.2.2.3 understood status"),
        .init(
            status: 599, response: ["Cache-Control: max-age=3600, no-store, must-understand"], storable: false,
            rule: "§5.2.2.3 unknown status"),
        .init(
            response: ["Cache-Control: private, max-age=3600"], kind: .shared, storable: false, rule: "§5.2.2.7 shared"),
        .init(response: ["Cache-Control: private, max-age=3600"], storable: true, rule: "§5.2.2.7 private cache"),
        .init(
            response: ["Cache-Control: private=\"x-user\", max-age=3600"], kind: .shared, storable: true,
            rule: "§5.2.2.7 qualified private"),
        .init(
            request: ["Authorization: FOO"], response: ["Cache-Control: max-age=100000"], kind: .shared,
            storable: false, rule: "§3.5"),
        .init(
            request: ["Authorization: FOO"], response: ["Cache-Control: max-age=3600, public"], kind: .shared,
            storable: true, rule: "§3.5 public"),
        .init(
            request: ["Authorization: FOO"], response: ["Cache-Control: max-age=3600, must-revalidate"], kind: .shared,
            storable: true, rule: "§3.5 must-revalidate"),
        .init(
            request: ["Authorization: FOO"], response: ["Cache-Control: s-maxage=3600"], kind: .shared, storable: true,
            rule: "§3.5 s-maxage"),
        .init(
            request: ["Authorization: FOO"], response: ["Cache-Control: max-age=100000"], storable: true,
            rule: "§3.5 applies to shared caches only"),
        .init(response: ["Cache-Control: max-age=60", "Vary: *"], storable: false, rule: "§4.1 Vary: * never matches"),
        .init(
            response: ["Cache-Control: max-age=60", "Vary: Foo, *"], storable: false, rule: "§4.1 Vary containing *"),
    ]

    @Test(arguments: rows)
    func storability(_ row: Row) {
        let rules = CacheRules(kind: row.kind)
        let request = Fixtures.request(row.method, "https://example.com/resource", row.request)
        let result = rules.storability(of: Fixtures.response(row.status, row.response), for: request)
        #expect(result.isStorable == row.storable, "\(result)")
        #expect(!result.reasons.isEmpty)
    }

    @Test("hop-by-hop, Connection-listed, proxy-only and no-cache-listed fields are not stored (§3.1, §5.2.2.4)")
    func storedHead() {
        let rules = CacheRules(kind: .shared)
        let response = Fixtures.response(
            200,
            [
                "Cache-Control: max-age=100000, no-cache=\"x-secret\", private=\"x-user\"", "Connection: a, b", "a: 1",
                "b: 2", "c: 3",
                "Keep-Alive: timeout=5", "Transfer-Encoding: chunked", "TE: trailers", "Upgrade: h2c",
                "Proxy-Connection: x",
                "Proxy-Authenticate: Basic", "Proxy-Authentication-Info: x", "Proxy-Authorization: y", "X-Secret: s",
                "X-User: u",
                "Set-Cookie: a=c", "Content-Length: 10", "Content-Security-Policy: default-src 'self'",
            ])
        let storability = rules.storability(of: response, for: Fixtures.request())
        let head = rules.headForStorage(response, storability: storability)
        let names = Set(head.headerFields.map { $0.name.canonicalName.lowercased() })
        #expect(names == ["cache-control", "c", "set-cookie", "content-length", "content-security-policy"])
    }

    @Test("a response that excludes nothing more is stored field for field; an upstream Cache-Status never is")
    func plainHeadForStorage() {
        let rules = CacheRules.shared
        let plain = Fixtures.response(200, ["Cache-Control: max-age=60", "Content-Type: text/html", "ETag: \"a\""])
        let head = rules.headForStorage(plain, storability: rules.storability(of: plain, for: Fixtures.request()))
        #expect(head.headerFields == plain.headerFields)
        let relayed = Fixtures.response(
            200, ["Cache-Control: max-age=60", "Cache-Status: upstream; hit", "Content-Type: text/html"])
        let stored = rules.headForStorage(relayed, storability: rules.storability(of: relayed, for: Fixtures.request()))
        #expect(stored.headerFields.map(\.name.rawName) == ["Cache-Control", "Content-Type"])
    }

    @Test("a private cache keeps private-listed fields")
    func privateCacheKeepsFields() {
        let rules = CacheRules.private
        let response = Fixtures.response(200, ["Cache-Control: max-age=60, private=\"x-user\"", "X-User: u"])
        let head = rules.headForStorage(response, storability: rules.storability(of: response, for: Fixtures.request()))
        #expect(head.headerFields[HTTPField.Name("X-User")!] == "u")
    }
}
