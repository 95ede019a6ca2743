import Foundation
import HTTPCaching
import Testing

@Suite("The URL rules the front doors share")
struct HTTPURLsTests {
    @Test(
        "http(s) URLs with a host, in any case; nothing else",
        arguments: [
            ("https://example.com/a", true, true), ("HTTP://Example.com", true, true),
            ("http://127.0.0.1:8080/", true, true),
            ("http://[::1]:8080/x", true, true), ("ftp://example.com/", false, false),
            ("mailto:a@example.com", false, false),
            ("/relative", false, false), ("http:///no-host", true, false),
            ("HtTpS://example.com/", true, true), ("httpx://example.com/", false, false),
            ("htt://example.com/", false, false), ("hTTp+x://example.com/", false, false),
            ("h-tp://example.com/", false, false),
        ])
    func httpURLs(text: String, isHTTP: Bool, isAbsolute: Bool) throws {
        let url = try #require(URL(string: text))
        #expect(HTTPURLs.isHTTP(url) == isHTTP)
        #expect(HTTPURLs.isAbsoluteHTTP(url) == isAbsolute)
    }

    @Test("authorities: IPv6 in brackets (once), the port only when given")
    func authorities() {
        #expect(HTTPURLs.authority(host: "example.com", port: nil) == "example.com")
        #expect(HTTPURLs.authority(host: "example.com", port: 8080) == "example.com:8080")
        #expect(HTTPURLs.authority(host: "::1", port: 8443) == "[::1]:8443")
        #expect(HTTPURLs.authority(host: "[::1]", port: nil) == "[::1]")
    }
}
