import Foundation
import Testing

@testable import WebCacheStore

@Suite("Cache keys")
struct CacheKeyTests {
    static let urls = [
        "http://127.0.0.1:9000/1k.bin", "https://example.com/a/b?c=1&d=%20", "http://example.com/",
        "HTTP://Example.COM/Path", "http://example.com", "http://example.com?q", "http://example.com/a#frag",
        "https://user:pw@example.com/x", "http://[::1]:8080/v6", "http://example.com:/empty-port",
        "http://ex-ample.org:8443/p;param?q=%C3%A9", "http://xn--bcher-kva.example/", "https://EXAMPLE.com:443/",
        "http://example.com/%7Euser/file.txt", "http://example.com/path with space",
    ]

    @Test("the fast path and URLComponents agree on every URL", arguments: urls)
    func fastPathAgrees(_ text: String) throws {
        let url = try #require(URL(string: text))
        let key = CacheKey(url: url)
        let slow = CacheKey.normalizedByComponents(url)
        #expect(key?.url == slow?.url)
        #expect(key?.host == slow?.host)
    }

    @Test("normal URLs take the fast path; others are normalised")
    func normalization() throws {
        #expect(CacheKey.hostOfNormalized("http://127.0.0.1:9000/1k.bin") == "127.0.0.1")
        #expect(CacheKey.hostOfNormalized("HTTP://example.com/") == nil)
        #expect(CacheKey.hostOfNormalized("http://example.com/a#b") == nil)
        let mixed = try #require(URL(string: "HTTP://Example.COM/a#frag"))
        let key = try #require(CacheKey(url: mixed))
        #expect(key.url == "http://example.com/a")
        #expect(key.host == "example.com")
        let queryOnly = try #require(URL(string: "http://example.com?q"))
        #expect(CacheKey(url: queryOnly)?.url == "http://example.com/?q")
    }
}
