import Foundation
import Testing
import WebCache
import WebCacheTestSupport
import WebCacheYAML

@Suite("Set-Cookie in a shared cache: keep (RFC 9111), strip, or do not store", .serialized)
struct SetCookieTests {
    /// Two requests through a reverse proxy for a fresh response that sets a cookie: what each
    /// client saw and how often the origin was asked.
    static func exchange(_ handling: CachePolicy.SetCookieHandling) async throws -> (
        first: String?, second: String?, fetches: Int
    ) {
        try await TestOrigin.with { origin in
            origin.route("/page") { _ in
                .text("page", headers: [("Cache-Control", "max-age=600"), ("Set-Cookie", "session=alice")])
            }
            var seen: (String?, String?) = (nil, nil)
            try await ProxyTests.withProxy(origin, adjust: { $0.policy.sharedSetCookie = handling }) { port, client in
                let (first, _) = try await ProxyTests.get(client, "http://127.0.0.1:\(port)/page")
                let (second, body) = try await ProxyTests.get(client, "http://127.0.0.1:\(port)/page")
                #expect(body == "page")
                seen = (first.headers.first(name: "set-cookie"), second.headers.first(name: "set-cookie"))
            }
            return (seen.0, seen.1, origin.count("/page"))
        }
    }

    @Test("keep (the default): stored and served with its cookie, as RFC 9111 and the conformance suite expect")
    func keep() async throws {
        #expect(CachePolicy().sharedSetCookie == .keep)
        let result = try await Self.exchange(.keep)
        #expect(result.first == "session=alice" && result.second == "session=alice" && result.fetches == 1)
    }

    @Test("strip: the client that fetched it gets the cookie; the next gets the stored page without it")
    func strip() async throws {
        let result = try await Self.exchange(.strip)
        #expect(result.first == "session=alice")
        #expect(result.second == nil)
        #expect(result.fetches == 1)
    }

    @Test("doNotStore: every such response comes from the origin, with its cookie")
    func doNotStore() async throws {
        let result = try await Self.exchange(.doNotStore)
        #expect(result.first == "session=alice" && result.second == "session=alice")
        #expect(result.fetches == 2)
    }

    @Test("the configuration file names it; anything else is an error")
    func configuration() throws {
        #expect(try CachePolicy.parse("sharedSetCookie: strip").sharedSetCookie == .strip)
        #expect(try CachePolicy.parse("sharedSetCookie: doNotStore").sharedSetCookie == .doNotStore)
        #expect(throws: PolicyError.self) { try CachePolicy.parse("sharedSetCookie: sometimes") }
    }
}
