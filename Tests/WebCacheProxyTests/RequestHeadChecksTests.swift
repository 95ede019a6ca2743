import Testing

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
}
