import Foundation
import HTTPCaching
import Testing
import WebCache
import WebCacheStore
import WebCacheTestSupport

@Suite("The proxy offline: forward mode is personal, reverse mode shared", .serialized)
struct ProxyOfflineTests {
    /// A `no-cache` page and a `must-revalidate` script, both stored, then the origin gone.
    static func storeThenStop(_ origin: TestOrigin, port: Int, forward: Bool) async throws -> (String, String) {
        origin.route("/page") { _ in .text("<p>page</p>", headers: [("Cache-Control", "no-cache"), ("ETag", "\"p\"")]) }
        origin.route("/app.js") { _ in
            .text("js", headers: [("Cache-Control", "max-age=0, must-revalidate"), ("ETag", "\"j\"")])
        }
        func request(_ path: String) -> String {
            let target = forward ? origin.url(path).absoluteString : path
            return "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nConnection: close\r\n\r\n"
        }
        #expect(try await RawHTTPClient.exchange(port: port, request("/page")).hasPrefix("HTTP/1.1 200"))
        #expect(try await RawHTTPClient.exchange(port: port, request("/app.js")).hasPrefix("HTTP/1.1 200"))
        try await origin.stop()
        return (request("/page"), request("/app.js"))
    }

    @Test(
        "forward mode (personal posture): no-cache and must-revalidate answers open offline at once, twice without trying the origin"
    )
    func forwardOffline() async throws {
        let origin = TestOrigin()
        try await origin.start()
        try await ProxyTests.withProxy(
            origin, reverse: false, allowed: ["127.0.0.1"], connectTimeout: .seconds(10),
            adjust: { $0.offlinePosture = .personal }
        ) { port, _ in
            let (page, script) = try await Self.storeThenStop(origin, port: port, forward: true)
            let start = ContinuousClock.now
            let first = try await RawHTTPClient.exchange(port: port, page)
            let elapsed = ContinuousClock.now - start
            #expect(first.hasPrefix("HTTP/1.1 200") && first.hasSuffix("<p>page</p>"))
            #expect(first.contains("detail=offline"))
            #expect(elapsed < .seconds(3), "the offline answer took \(elapsed)")
            let js = try await RawHTTPClient.exchange(port: port, script)
            #expect(js.hasPrefix("HTTP/1.1 200") && js.hasSuffix("js"))
            let again = try await RawHTTPClient.exchange(port: port, page)
            #expect(again.hasPrefix("HTTP/1.1 200"))
            let metrics = try await RawHTTPClient.exchange(
                port: port, "GET /_webcache/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(metrics.contains("webcache_unreachable_origins 1"))
            #expect(metrics.contains("webcache_unreachable_skips_total 2"))
        }
    }

    @Test("reverse mode (shared posture): the same answers are refused offline with 504, at once")
    func reverseOffline() async throws {
        let origin = TestOrigin()
        try await origin.start()
        try await ProxyTests.withProxy(origin, reverse: true, connectTimeout: .seconds(10)) { port, _ in
            let (page, script) = try await Self.storeThenStop(origin, port: port, forward: false)
            let start = ContinuousClock.now
            let refused = try await RawHTTPClient.exchange(port: port, page)
            #expect(refused.hasPrefix("HTTP/1.1 504"))
            #expect(ContinuousClock.now - start < .seconds(3))
            #expect(try await RawHTTPClient.exchange(port: port, script).hasPrefix("HTTP/1.1 504"))
        }
    }

    @Test("forward mode, origin blackholed: the stored page after the network timeout")
    func forwardBlackholed() async throws {
        let origin = TestOrigin()
        try await origin.start()
        let hold = Locked(false)
        origin.route("/slow") { _ in
            var response = TestOrigin.Response.text(
                "slow page", headers: [("Cache-Control", "no-cache"), ("ETag", "\"s\"")])
            if hold.withLock({ $0 }) { response.delay = .seconds(4) }
            return response
        }
        try await withCleanup({ try? await origin.stop() }) {
            try await ProxyTests.withProxy(
                origin, reverse: false, allowed: ["127.0.0.1"],
                adjust: {
                    $0.offlinePosture = .personal
                    $0.networkTimeout = .milliseconds(300)
                }
            ) { port, _ in
                let request =
                    "GET \(origin.url("/slow").absoluteString) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nConnection: close\r\n\r\n"
                #expect(try await RawHTTPClient.exchange(port: port, request).hasSuffix("slow page"))
                hold.withLock { $0 = true }
                let start = ContinuousClock.now
                let late = try await RawHTTPClient.exchange(port: port, request)
                #expect(
                    late.hasPrefix("HTTP/1.1 200") && late.contains("detail=network-timeout")
                        && late.hasSuffix("slow page"))
                #expect(ContinuousClock.now - start < .milliseconds(2500))
            }
        }
    }
}
