import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Invalidation by unsafe methods (RFC 9111 §4.4)")
struct InvalidationTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let method: String
        var status = 200
        var response: [String] = []
        let expected: [String]
        let rule: String
        var testDescription: String { "\(method) → \(status) \(response) (\(rule))" }
    }

    @Test(arguments: [
        Row(method: "POST", expected: ["https://example.com/a/b?q=1"], rule: "target URI"),
        Row(method: "PUT", expected: ["https://example.com/a/b?q=1"], rule: "PUT"),
        Row(method: "DELETE", expected: ["https://example.com/a/b?q=1"], rule: "DELETE"),
        Row(method: "PATCH", expected: ["https://example.com/a/b?q=1"], rule: "PATCH"),
        Row(method: "M-SEARCH", expected: ["https://example.com/a/b?q=1"], rule: "unknown methods are unsafe"),
        Row(method: "POST", status: 303, expected: ["https://example.com/a/b?q=1"], rule: "3xx is not an error"),
        Row(method: "POST", status: 500, expected: [], rule: "errors do not invalidate"),
        Row(method: "POST", status: 404, expected: [], rule: "4xx does not invalidate"),
        Row(method: "GET", expected: [], rule: "safe"),
        Row(method: "HEAD", expected: [], rule: "safe"),
        Row(method: "OPTIONS", expected: [], rule: "safe"),
        Row(
            method: "POST", response: ["Location: location_target", "Content-Location: /content_location_target"],
            expected: [
                "https://example.com/a/b?q=1", "https://example.com/a/location_target",
                "https://example.com/content_location_target",
            ],
            rule: "same-origin Location and Content-Location"),
        Row(
            method: "POST", response: ["Location: https://other.example/x", "Content-Location: http://example.com/a"],
            expected: ["https://example.com/a/b?q=1"], rule: "other origins are left alone"),
        Row(
            method: "POST", response: ["Location: https://example.com:443/a/b?q=1"],
            expected: ["https://example.com/a/b?q=1"], rule: "no duplicates"),
    ])
    func invalidations(_ row: Row) {
        let request = Fixtures.request(HTTPRequest.Method(row.method)!, "https://example.com/a/b?q=1")
        let uris = CacheRules.shared.invalidations(for: request, response: Fixtures.response(row.status, row.response))
        #expect(uris.map(\.absoluteString) == row.expected)
    }
}
