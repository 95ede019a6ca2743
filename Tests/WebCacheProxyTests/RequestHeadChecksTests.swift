import HTTPWire
import NIOHTTP1
import Testing
import WebCacheTestSupport

@testable import WebCacheProxy

@Suite("Host field values (RFC 9110 §7.2)")
struct RequestHeadChecksTests {
    @Test(
        "valid authorities",
        arguments: [
            "example.com", "example.com:8080", "127.0.0.1", "127.0.0.1:80", "[::1]", "[::1]:443", "[2001:db8::1]",
            "a-b_c~d.example",
            "xn--bcher-kva.example", "%41.example", "",
        ])
    func valid(_ value: String) {
        #expect(RequestHeadChecks.isAuthority(value))
    }

    @Test(
        "invalid authorities",
        arguments: [
            "user@example.com", "example.com:", "example.com:80:80", "example.com:123456", "example.com:8o",
            "exa mple.com", "[::1", "[]",
            "[::1]x", "[::g]", "example.com/path", "bücher.example", "a\tb",
        ])
    func invalid(_ value: String) {
        #expect(!RequestHeadChecks.isAuthority(value))
    }

    struct HostFields: Sendable, CustomTestStringConvertible {
        var fields: [(String, String)]
        var version = HTTPVersion.http1_1
        /// The problem found, or `nil` for none.
        var problem: String?

        var testDescription: String { "\(fields) over HTTP/\(version.major).\(version.minor)" }
    }

    @Test(
        "Host fields are counted in any case, and only Host (RFC 9112 §3.2)",
        arguments: [
            HostFields(fields: [("Host", "a.test")], problem: nil),
            HostFields(fields: [("host", "a.test")], problem: nil),
            HostFields(fields: [("hOsT", "a.test")], problem: nil),
            HostFields(fields: [("Host", "a.test"), ("HOST", "b.test")], problem: "the request has 2 Host fields"),
            HostFields(
                fields: [("X-Host", "a.test"), ("Hosts", "b.test"), ("Hos", "c")],
                problem: "an HTTP/1.1 request needs a Host field"),
            HostFields(fields: [], version: .http1_0, problem: nil),
            HostFields(
                fields: [("Accept", "*/*"), ("host", "a b")], problem: "the Host field is not a valid host[:port]"),
        ])
    func hostFields(_ row: HostFields) throws {
        let head = try RequestHead.parsing(
            "GET / HTTP/\(row.version.major).\(row.version.minor)\r\n"
                + row.fields.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n")
        #expect(RequestHeadChecks.hostProblem(head) == row.problem)
    }
}
