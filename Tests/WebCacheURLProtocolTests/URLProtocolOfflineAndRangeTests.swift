import Foundation
import HTTPCaching
import Testing
import WebCache
import WebCacheTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// In the URLSession suite: `WebCacheURLProtocol` is installed process-wide, so every test that
/// installs it runs in this one serialized suite.
extension URLProtocolTests {
    @Test("URLSession through WebCacheURLProtocol: a no-cache page opens offline, at once")
    func urlProtocolOffline() async throws {
        try await EngineHarness.run(connectTimeout: .seconds(10)) { h in
            h.origin.route("/u") { _ in
                .text("via urlsession", headers: [("Cache-Control", "no-cache"), ("ETag", "\"u\"")])
            }
            let configuration = URLSessionConfiguration.ephemeral
            WebCacheURLProtocol.install(h.cache, into: configuration)
            defer { WebCacheURLProtocol.uninstall() }
            let session = URLSession(configuration: configuration)
            _ = try await session.data(from: h.origin.url("/u"))
            try await h.origin.stop()
            var data = Data()
            var response: URLResponse?
            let elapsed = try await secondsTaken { (data, response) = try await session.data(from: h.origin.url("/u")) }
            #expect(String(decoding: data, as: UTF8.self) == "via urlsession")
            #expect(
                (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status")?.contains("detail=offline")
                    == true)
            #expect(elapsed < 3)
        }
    }

    @Test("URLSession through WebCacheURLProtocol gets a 206 from the store")
    func urlProtocol() async throws {
        try await EngineHarness.run { h in
            MediaFixture.route(h.origin)
            let configuration = URLSessionConfiguration.ephemeral
            WebCacheURLProtocol.install(h.cache, into: configuration)
            defer { WebCacheURLProtocol.uninstall() }
            let session = URLSession(configuration: configuration)
            _ = try await session.data(from: h.origin.url("/clip.webm"))
            var request = URLRequest(url: h.origin.url("/clip.webm"))
            request.setValue("bytes=1000-1999", forHTTPHeaderField: "Range")
            let (data, response) = try await session.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 206)
            #expect(byteDifference(data, MediaFixture.media.subdata(in: 1000..<2000)) == nil)
            #expect(h.origin.count("/clip.webm") == 1)
        }
    }
}
