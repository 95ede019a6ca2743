import Foundation
import HTTPCaching
import HTTPTypes
import Testing

@Suite("Host names within a domain, and the statuses stale-if-error covers")
struct HostNamesTests {
    @Test(
        "a host is within a domain when it is the domain or a sub-domain of it",
        arguments: [
            ("example.com", "example.com", false, true),
            ("a.example.com", "example.com", false, true),
            ("a.b.example.com", "example.com", false, true),
            ("badexample.com", "example.com", false, false),
            ("example.com.evil.test", "example.com", false, false),
            ("example.com", "example.com", true, false),
            ("a.example.com", "example.com", true, true),
            ("example.com", "", false, false),
        ])
    func within(host: String, domain: String, subdomainsOnly: Bool, expected: Bool) {
        #expect(HostNames.host(host, isWithin: domain, subdomainsOnly: subdomainsOnly) == expected)
    }

    @Test("stale-if-error covers 500, 502, 503 and 504, and only when the decision allows it (RFC 5861 §4)")
    func staleIfErrorStatuses() {
        #expect(ReuseDecision.staleIfErrorStatuses == [500, 502, 503, 504])
        let rules = CacheRules.shared
        var response = HTTPResponse(status: .ok)
        response.headerFields[.cacheControl] = "max-age=10, stale-if-error=600"
        let now = Date(timeIntervalSince1970: 1_000_000)
        let stored = StoredResponse(
            request: HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/"),
            response: response,
            requestTime: now, responseTime: now)
        let request = HTTPRequest(method: .get, scheme: "https", authority: "example.com", path: "/")
        let stale = rules.reuse(stored, for: request, now: now.addingTimeInterval(60))
        for status in [500, 502, 503, 504] { #expect(stale.servesStale(insteadOf: status)) }
        for status in [200, 404, 501, 505] { #expect(!stale.servesStale(insteadOf: status)) }
        response.headerFields[.cacheControl] = "max-age=10"
        let withoutWindow = StoredResponse(
            request: stored.request, response: response, requestTime: now, responseTime: now)
        #expect(!rules.reuse(withoutWindow, for: request, now: now.addingTimeInterval(60)).servesStale(insteadOf: 503))
    }
}
