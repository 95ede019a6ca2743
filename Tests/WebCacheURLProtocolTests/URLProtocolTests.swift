import Foundation
import HTTPCaching
import Testing
import WebCache
import WebCacheTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("URLSession integration through WebCacheURLProtocol", .serialized)
struct URLProtocolTests {
    func session(_ cache: HTTPCache) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        WebCacheURLProtocol.install(cache, into: configuration)
        return URLSession(configuration: configuration)
    }

    @Test("a real URLSession is answered by the cache; the second request is a hit")
    func hits() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/u") { _ in .text("via urlsession", headers: [("Cache-Control", "max-age=60")]) }
            let session = session(h.cache)
            defer { WebCacheURLProtocol.uninstall() }
            let (first, _) = try await session.data(from: h.origin.url("/u"))
            let (second, response) = try await session.data(from: h.origin.url("/u"))
            #expect(String(decoding: first, as: UTF8.self) == "via urlsession")
            #expect(second == first)
            let status = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status")
            #expect(status?.hasPrefix("WebCache; hit") == true)
            #expect(h.origin.count("/u") == 1)
        }
    }

    @Test("POST bodies reach the origin unchanged, from httpBody and from httpBodyStream")
    func postBodies() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/post") { request in
                .text("got \(request.body.count) bytes, first \(request.body.first ?? 0)")
            }
            let session = session(h.cache)
            defer { WebCacheURLProtocol.uninstall() }
            let payload = Data((0..<50_000).map { UInt8(($0 % 200) + 1) })
            var request = URLRequest(url: h.origin.url("/post"))
            request.httpMethod = "POST"
            request.httpBody = payload
            let (data, _) = try await session.data(for: request)
            #expect(String(decoding: data, as: UTF8.self) == "got 50000 bytes, first 1")
            var streamed = URLRequest(url: h.origin.url("/post"))
            streamed.httpMethod = "POST"
            streamed.httpBodyStream = InputStream(data: payload)
            _ = try await session.data(for: streamed)
            #expect(h.origin.requests(to: "/post").map(\.body) == [payload, payload])
        }
    }

    @Test("redirects are followed inside the cache and the final response is reported")
    func redirects() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/from") { _ in .init(status: 301, headers: [("Location", "/to")]) }
            h.origin.route("/to") { _ in .text("landed", headers: [("Cache-Control", "max-age=60")]) }
            let session = session(h.cache)
            defer { WebCacheURLProtocol.uninstall() }
            let (data, response) = try await session.data(from: h.origin.url("/from"))
            #expect(String(decoding: data, as: UTF8.self) == "landed")
            #expect(response.url?.path == "/to")
        }
    }

    @Test("cachePolicy maps to request modes: returnCacheDataDontLoad answers 504 on a miss")
    func cachePolicies() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/cp") { _ in .text("cp", headers: [("Cache-Control", "max-age=1")]) }
            let session = session(h.cache)
            defer { WebCacheURLProtocol.uninstall() }
            var onlyCache = URLRequest(url: h.origin.url("/cp"), cachePolicy: .returnCacheDataDontLoad)
            let (_, missResponse) = try await session.data(for: onlyCache)
            #expect((missResponse as? HTTPURLResponse)?.statusCode == 504)
            _ = try await session.data(from: h.origin.url("/cp"))
            h.clock.advance(100)
            onlyCache.cachePolicy = .returnCacheDataElseLoad
            let (stale, _) = try await session.data(for: onlyCache)
            #expect(String(decoding: stale, as: UTF8.self) == "cp")
            #expect(h.origin.count("/cp") == 1)
            let reload = URLRequest(url: h.origin.url("/cp"), cachePolicy: .reloadIgnoringLocalCacheData)
            _ = try await session.data(for: reload)
            #expect(h.origin.count("/cp") == 2)
            #expect(WebCacheURLProtocol.mode(for: .reloadRevalidatingCacheData) == .revalidate)
            #expect(
                WebCacheURLProtocol.mode(for: .reloadIgnoringLocalAndRemoteCacheData) == .reloadIgnoringRemoteCaches)
            #expect(WebCacheURLProtocol.mode(for: .useProtocolCachePolicy) == .default)
        }
    }

    @Test("the URLSession origin fetches without following redirects")
    func urlSessionOrigin() async throws {
        try await TestOrigin.with { origin in
            origin.route("/hop") { _ in .init(status: 302, headers: [("Location", "/elsewhere")]) }
            origin.route("/plain") { _ in .text("plain", headers: [("X-Test", "1")]) }
            let network = URLSessionOrigin()
            let hop = try await network.fetch(Fixtures.request(.get, origin.url("/hop").absoluteString), body: nil)
            #expect(hop.head.status.code == 302)
            let plain = try await network.fetch(Fixtures.request(.get, origin.url("/plain").absoluteString), body: nil)
            #expect(String(decoding: plain.body, as: UTF8.self) == "plain")
            try await origin.stop()
            await #expect(throws: OriginError.self) {
                try await network.fetch(Fixtures.request(.get, origin.url("/plain").absoluteString), body: nil)
            }
        }
    }
}
