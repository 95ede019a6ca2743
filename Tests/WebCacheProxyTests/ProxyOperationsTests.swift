import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebCache
import WebCacheNIO
import WebCacheProxy
import WebCacheStore
import WebCacheTestSupport

@Suite("The caching proxy: limits, metrics, shutdown", .serialized)
struct ProxyOperationsTests {
    @Test(
        "oversized heads get 431, oversized bodies 413, quiet connections are closed, and past the connection limit 503"
    )
    func limits() async throws {
        try await TestOrigin.with { origin in
            origin.route("/ok") { _ in .text("ok") }
            try await ProxyTests.withProxy(
                origin,
                configure: {
                    $0.maximumHeaderSize = 1024
                    $0.maximumRequestBodySize = 100
                }
            ) { port, _ in
                let bigHead =
                    "GET /ok HTTP/1.1\r\nHost: x\r\nX-Filler: \(String(repeating: "a", count: 2000))\r\nConnection: close\r\n\r\n"
                let answer1 = try await RawHTTPClient.exchange(port: port, bigHead)
                #expect(answer1.hasPrefix("HTTP/1.1 431"))
                let bigBody =
                    "POST /ok HTTP/1.1\r\nHost: x\r\nContent-Length: 200\r\nConnection: close\r\n\r\n"
                    + String(repeating: "b", count: 200)
                let answer2 = try await RawHTTPClient.exchange(port: port, bigBody)
                #expect(answer2.hasPrefix("HTTP/1.1 413"))
                #expect(origin.count("/ok") == 0)
            }
            // A short idle timeout on a proxy of its own: on a loaded machine it could otherwise
            // close the connections above before their requests were read.
            try await ProxyTests.withProxy(origin, configure: { $0.idleTimeout = .milliseconds(300) }) { port, _ in
                let clock = ContinuousClock()
                let start = clock.now
                let silent = try await RawHTTPClient.exchange(port: port, "", timeout: 5)
                #expect(silent.isEmpty)
                #expect(clock.now - start < .seconds(3), "an idle connection was not closed")
            }
            // The connection limit, with an idle timeout long enough that a loaded machine does not
            // close the two idle connections before the third comes.
            try await ProxyTests.withProxy(origin, configure: { $0.maximumConnections = 2 }) { port, _ in
                let first = try RawHTTPClient.openIdleConnection(port: port)
                let second = try RawHTTPClient.openIdleConnection(port: port)
                defer {
                    RawHTTPClient.close(first)
                    RawHTTPClient.close(second)
                }
                try await Task.sleep(for: .milliseconds(50))
                let refused = try await RawHTTPClient.exchange(
                    port: port, "GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(refused.hasPrefix("HTTP/1.1 503"))
            }
        }
    }

    @Test("the metrics path answers the counters in Prometheus text format")
    func metrics() async throws {
        try await TestOrigin.with { origin in
            // Larger than one write (64 KB): its answer ends once the entry is stored, so the
            // second request is a hit, never a share of the first one's fetch.
            let body = String(repeating: "counted ", count: 10_000)
            origin.route("/m") { _ in .text(body, headers: [("Cache-Control", "max-age=600")]) }
            try await ProxyTests.withProxy(origin) { port, client in
                _ = try await ProxyTests.get(client, "http://127.0.0.1:\(port)/m")
                _ = try await ProxyTests.get(client, "http://127.0.0.1:\(port)/m")
                let (response, text) = try await ProxyTests.get(client, "http://127.0.0.1:\(port)/_webcache/metrics")
                #expect(response.headers.first(name: "Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
                let lines = Set(text.split(separator: "\n").map(String.init))
                #expect(lines.contains("webcache_requests_total 2"))
                #expect(lines.contains("webcache_hits_total 1"))
                #expect(lines.contains("webcache_misses_total 1"))
                #expect(lines.contains("webcache_bytes_from_cache_total 80000"))
                #expect(lines.contains("webcache_bytes_from_origin_total 80000"))
                #expect(lines.contains(#"webcache_proxy_responses_total{code="2xx"} 2"#))
                #expect(lines.contains("# TYPE webcache_hits_total counter"))
                #expect(origin.count("/_webcache/metrics") == 0)
            }
        }
    }

    @Test("on shutdown a request in flight finishes, then the proxy stops listening")
    func gracefulShutdown() async throws {
        try await TestOrigin.with { origin in
            origin.route("/long") { _ in
                var response = TestOrigin.Response.text("finished anyway")
                response.delay = .milliseconds(600)
                return response
            }
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let network = try SwiftNIOOrigin(connectTimeout: .seconds(10), timeout: .seconds(5))
            let cache = try HTTPCache(
                configuration: .init(store: CacheStore.Configuration(directory: directory.url), rules: .shared),
                origin: network)
            let proxy = CachingProxy(
                cache: cache, configuration: ProxyConfiguration(port: 0, upstream: origin.url("/")))
            let serving = Task { try await proxy.run() }
            let proxyPort = try await ProxyTests.boundPort(of: proxy)
            let inFlight = Task {
                try await RawHTTPClient.exchange(port: proxyPort, "GET /long HTTP/1.1\r\nHost: x\r\n\r\n")
            }
            // Shut down once the request is in flight: the origin has it (within 5 s).
            for _ in 0..<500 where origin.count("/long") == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(origin.count("/long") == 1)
            serving.cancel()
            let answer = try await inFlight.value
            #expect(answer.hasPrefix("HTTP/1.1 200"))
            #expect(answer.hasSuffix("finished anyway"))
            _ = try await serving.value
            #expect(throws: (any Error).self) {
                try RawHTTPClient.openIdleConnection(port: proxyPort)
            }
            try await network.shutdown()
        }
    }
}
