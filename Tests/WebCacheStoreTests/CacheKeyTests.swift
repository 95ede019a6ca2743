import Foundation
import HTTPTypes
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

    @Test(
        "a stored request read back has the parts URL parsing gives it",
        arguments: urls + [
            "http://example.com/a|b", "http://example.com/[x]?y=\"z\"", "http://example.com/~a/%7e?$&'()*+,;=:@!",
        ])
    func storedRequestParts(_ text: String) throws {
        let fields: HTTPFields = [.accept: "text/html"]
        let url = try #require(URL(string: text))
        let keyURL = try #require(CacheKey(url: url)).url
        for stored in [keyURL, text] {
            let parsed = try #require(URL(string: stored))
            let expected = HTTPRequest(method: .get, url: parsed, headerFields: fields)
            let read = try #require(EntryRow.storedRequest(method: .get, url: stored, fields: fields))
            #expect(read == expected, "\(stored)")
        }
    }

    @Test("a URL in normal form divides into scheme, authority and path")
    func normalFormParts() {
        #expect(
            CacheKey.normalForm(of: "https://example.com:8443/a/b?c=1")
                == .init(scheme: "https", authority: "example.com:8443", path: "/a/b?c=1"))
        #expect(CacheKey.normalForm(of: "http://127.0.0.1/")?.path == "/")
        #expect(CacheKey.normalForm(of: "http://example.com") == nil)
        #expect(CacheKey.normalForm(of: "https://user@example.com/") == nil)
        for damaged in ["not a url", "/relative", "mailto:someone", ""] {
            #expect(EntryRow.storedRequest(method: .get, url: damaged, fields: [:]) == nil)
        }
    }

    @Test("body file names: only the shape the store gives its files names a file under its root")
    func bodyNames() {
        let key = CacheKey(storedMethod: "GET", url: "https://example.com/a", host: "example.com")
        let files = BodyFiles(directory: URL(fileURLWithPath: "/tmp/store"), namespace: "default")
        #expect(BodyFiles.isBodyName(files.newName(key: key, varyKey: "")))
        for damaged in [
            "../victim.txt", "../../etc/passwd.body", "/etc/x.body", "ab/cd/../x.body", "ab/cd/ef", "ab/cd.body",
            "ab/cd/ef/01.body", "ab//01.body", "AB/cd/01.body", "ab/cd/.body", "", ".body",
        ] {
            #expect(!BodyFiles.isBodyName(damaged), "\(damaged)")
        }
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
