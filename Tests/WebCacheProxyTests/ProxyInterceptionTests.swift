import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import Testing
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheNIO
import WebCacheProxy
import WebCacheStore
import WebCacheTLS
import WebCacheTestSupport

/// HTTPS through the forward proxy with interception: a real TLS origin with its own test CA,
/// clients that trust the proxy's authority.
@Suite("HTTPS interception through the proxy", .serialized)
struct ProxyInterceptionTests {
    /// A forward proxy intercepting HTTPS with a new authority, trusting `originAuthority` for
    /// upstream, its configuration changed by `configure`; `body` gets the proxy's port, a
    /// client through it that trusts the proxy's authority, and that authority.
    static func withInterceptingProxy(
        trusting originAuthority: CertificateAuthority?, hosts: [String] = [], allowed: [String] = [],
        configure: (inout ProxyConfiguration) -> Void = { _ in },
        _ body: (Int, HTTPClient, CertificateAuthority) async throws -> Void
    ) async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let authority = try CertificateAuthority.make(commonName: "WebCache proxy test CA")
        let trustFiles =
            try originAuthority.map { authority -> [String] in
                let file = temporary.url.appendingPathComponent("origin-ca.pem")
                try authority.certificatePEM.write(to: file, atomically: true, encoding: .utf8)
                return [file.path]
            } ?? []
        let trust = try OriginTrust(certificateFiles: trustFiles)
        let network = try SwiftNIOOrigin(connectTimeout: .seconds(10), timeout: .seconds(5), trust: trust)
        let cache = try HTTPCache(
            configuration: HTTPCache.Configuration(
                store: CacheStore.Configuration(directory: temporary.url.appendingPathComponent("cache")),
                rules: .shared),
            origin: network)
        var configuration = ProxyConfiguration(port: 0, allowedDestinations: allowed)
        configuration.tlsInterception = try TLSInterception(authority: authority, hosts: hosts, upstreamTrust: trust)
        configure(&configuration)
        let proxy = CachingProxy(cache: cache, configuration: configuration)
        let serving = Task { try await proxy.run() }
        let port = try await ProxyTests.boundPort(of: proxy)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(
                tlsConfiguration: try tlsTrusting(authority), proxy: .server(host: "127.0.0.1", port: port)))
        var failure: (any Error)?
        do {
            try await body(port, client, authority)
        } catch {
            failure = error
        }
        try? await client.shutdown()
        serving.cancel()
        _ = await serving.result
        try? await network.shutdown()
        if let failure { throw failure }
    }

    static func tlsTrusting(_ authority: CertificateAuthority) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates([
            try NIOSSLCertificate(bytes: Array(authority.certificatePEM.utf8), format: .pem)
        ])
        return tls
    }

    @Test(
        "a hit is served over TLS from the cache without reaching the origin; revalidation goes upstream over verified TLS"
    )
    func hitsAndRevalidation() async throws {
        let originTLS = try TestTLS()
        try await TestOrigin.with(tls: originTLS) { origin in
            origin.route("/page") { _ in .text("secure page", headers: [("Cache-Control", "max-age=600")]) }
            origin.route("/_webcache/metrics") { _ in .text("the origin's own page") }
            origin.route("/news") { request in
                if request.headers.first(where: { $0.0.lowercased() == "if-none-match" })?.1 == "\"v1\"" {
                    return TestOrigin.Response(
                        status: 304, headers: [("ETag", "\"v1\""), ("Cache-Control", "no-cache")])
                }
                return .text("latest news", headers: [("Cache-Control", "no-cache"), ("ETag", "\"v1\"")])
            }
            try await Self.withInterceptingProxy(trusting: originTLS.authority) { _, client, _ in
                let url = origin.url("/page").absoluteString
                #expect(url.hasPrefix("https://"))
                let (first, firstBody) = try await ProxyTests.get(client, url)
                let (second, secondBody) = try await ProxyTests.get(client, url)
                #expect(first.status == .ok && second.status == .ok)
                #expect(firstBody == "secure page" && secondBody == "secure page")
                #expect(origin.count("/page") == 1, "the second request is a hit")
                #expect(second.headers.first(name: "cache-status")?.contains("hit") == true)

                let (_, news) = try await ProxyTests.get(client, origin.url("/news").absoluteString)
                let (revalidated, newsAgain) = try await ProxyTests.get(client, origin.url("/news").absoluteString)
                #expect(news == "latest news" && newsAgain == "latest news")
                #expect(revalidated.status == .ok)
                #expect(origin.count("/news") == 2)
                #expect(
                    origin.requests(to: "/news").last?.headers.contains { $0.0.lowercased() == "if-none-match" } == true
                )
                // The proxy's metrics path is the origin's inside a tunnel.
                let (_, metricsPage) = try await ProxyTests.get(client, origin.url("/_webcache/metrics").absoluteString)
                #expect(metricsPage == "the origin's own page")
            }
        }
    }

    @Test("https:// entries are never mixed with http:// ones for the same host and path")
    func schemesKeptApart() async throws {
        try await TestOrigin.with(tls: try TestTLS()) { origin in
            origin.route("/same") { _ in .text("over TLS", headers: [("Cache-Control", "max-age=600")]) }
            try await Self.withInterceptingProxy(trusting: origin.tls?.authority) { port, client, _ in
                _ = try await ProxyTests.get(client, origin.url("/same").absoluteString)
                // The same host and path over plain HTTP is another resource: a miss (and here an
                // origin that does not speak plain HTTP), never the stored HTTPS answer.
                let plain = try await RawHTTPClient.exchange(
                    port: port,
                    "GET http://127.0.0.1:\(origin.port)/same HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nConnection: close\r\n\r\n"
                )
                #expect(!plain.contains("over TLS"))
            }
        }
    }

    @Test("an origin whose certificate does not verify, or names another host, gets 502 and no certificate")
    func untrustedUpstreamRefused() async throws {
        let stranger = TestOrigin(tls: try TestTLS())
        try await stranger.start()
        try await withCleanup({ try? await stranger.stop() }) {
            let trusted = try CertificateAuthority.make(commonName: "trusted test CA")
            let misnamed = TestOrigin(tls: try TestTLS(name: "other.example", authority: trusted))
            try await misnamed.start()
            try await withCleanup({ try? await misnamed.stop() }) {
                try await Self.withInterceptingProxy(trusting: trusted) { port, _, _ in
                    let untrusted = try await TunnelClient.exchange(
                        proxyPort: port, target: "127.0.0.1:\(stranger.port)", tls: nil, payload: "")
                    #expect(untrusted.connectAnswer.hasPrefix("HTTP/1.1 502"))
                    #expect(untrusted.connectAnswer.contains("does not verify"))
                    let wrongName = try await TunnelClient.exchange(
                        proxyPort: port, target: "127.0.0.1:\(misnamed.port)", tls: nil, payload: "")
                    #expect(wrongName.connectAnswer.hasPrefix("HTTP/1.1 502"))
                    #expect(wrongName.connectAnswer.contains("not for this host name"))
                    #expect(stranger.requests().isEmpty && misnamed.requests().isEmpty)
                }
            }
        }
    }

    @Test("hosts not on the interception list, and origins that do not speak TLS, are tunnelled byte for byte")
    func passThrough() async throws {
        let originTLS = try TestTLS()
        try await TestOrigin.with(tls: originTLS) { origin in
            origin.route("/page") { _ in .text("direct", headers: [("Cache-Control", "max-age=600")]) }
            let plain = TestOrigin()
            try await plain.start()
            try await withCleanup({ try? await plain.stop() }) {
                plain.route("/plain") { _ in .text("not TLS") }
                try await Self.withInterceptingProxy(trusting: originTLS.authority, hosts: ["example.org"]) {
                    port, _, _ in
                    // The client sees the origin's own certificate: it trusts only the origin's CA.
                    let request = "GET /page HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nConnection: close\r\n\r\n"
                    for _ in 0..<2 {
                        let exchange = try await TunnelClient.exchange(
                            proxyPort: port, target: "127.0.0.1:\(origin.port)",
                            tls: try Self.tlsTrusting(originTLS.authority), payload: request)
                        #expect(exchange.received.contains("direct"))
                    }
                    #expect(origin.count("/page") == 2, "tunnelled requests are not cached")
                }
                try await Self.withInterceptingProxy(trusting: originTLS.authority) { port, _, _ in
                    let exchange = try await TunnelClient.exchange(
                        proxyPort: port, target: "127.0.0.1:\(plain.port)", tls: nil,
                        payload: "GET /plain HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    #expect(exchange.connectAnswer.hasPrefix("HTTP/1.1 200"))
                    #expect(exchange.received.contains("not TLS"))
                }
            }
        }
    }

    @Test("the destination allow-list applies to intercepted tunnels; a Host other than the tunnel's is refused")
    func allowListAndHost() async throws {
        let originTLS = try TestTLS()
        try await TestOrigin.with(tls: originTLS) { origin in
            origin.route("/page") { _ in .text("page", headers: [("Cache-Control", "max-age=600")]) }
            try await Self.withInterceptingProxy(trusting: originTLS.authority, allowed: ["example.org"]) {
                port, _, _ in
                let refused = try await TunnelClient.exchange(
                    proxyPort: port, target: "127.0.0.1:\(origin.port)", tls: nil, payload: "")
                #expect(refused.connectAnswer.hasPrefix("HTTP/1.1 403"))
            }
            try await Self.withInterceptingProxy(trusting: originTLS.authority) { port, _, authority in
                let smuggled = try await TunnelClient.exchange(
                    proxyPort: port, target: "127.0.0.1:\(origin.port)", tls: try Self.tlsTrusting(authority),
                    payload: "GET /page HTTP/1.1\r\nHost: bank.example\r\nConnection: close\r\n\r\n")
                #expect(smuggled.received.hasPrefix("HTTP/1.1 421"), "\(smuggled.received)")
                #expect(origin.requests().isEmpty)
                let started = ContinuousClock.now
                let honest = try await TunnelClient.exchange(
                    proxyPort: port, target: "127.0.0.1:\(origin.port)", tls: try Self.tlsTrusting(authority),
                    payload: "GET /page HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nConnection: close\r\n\r\n")
                #expect(honest.received.hasPrefix("HTTP/1.1 200"))
                #expect(honest.received.contains("page"))
                // Closed at once after `Connection: close`, not after TLS's shutdown timeout (1 s):
                // the client's TCP close ends the TLS connection.
                #expect(ContinuousClock.now - started < .milliseconds(900))
            }
        }
    }

    @Test("a WebSocket upgrade inside an intercepted tunnel is spliced through to the origin, uncached")
    func webSocketSpliced() async throws {
        let originTLS = try TestTLS()
        let echo = try await UpgradeEchoServer.start(tls: originTLS.context)
        try await withCleanup({ try? await echo.stop() }) {
            try await Self.withInterceptingProxy(trusting: originTLS.authority) { port, _, authority in
                let exchange = try await TunnelClient.exchange(
                    proxyPort: port, target: "127.0.0.1:\(echo.port)", tls: try Self.tlsTrusting(authority),
                    payload:
                        "GET /chat HTTP/1.1\r\nHost: 127.0.0.1:\(echo.port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\nping-after-upgrade",
                    until: "echo:ping-after-upgrade")
                #expect(exchange.received.hasPrefix("HTTP/1.1 101"), "\(exchange.received)")
                #expect(exchange.received.contains("echo:ping-after-upgrade"))
            }
        }
    }

    @Test("an origin that cannot be reached is still intercepted, so that what the cache holds is served")
    func unreachableOriginServedFromCache() async throws {
        let originTLS = try TestTLS()
        let origin = TestOrigin(tls: originTLS)
        try await origin.start()
        origin.route("/page") { _ in .text("kept for offline", headers: [("Cache-Control", "max-age=600")]) }
        try await Self.withInterceptingProxy(trusting: originTLS.authority) { port, client, authority in
            let url = origin.url("/page").absoluteString
            _ = try await ProxyTests.get(client, url)
            // Stored once a request is a hit (the store is written as the body streams through).
            for _ in 0..<200 {
                let (again, _) = try await ProxyTests.get(client, url)
                if again.headers.first(name: "cache-status")?.contains("hit") == true { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            try await origin.stop()
            // A new connection (a new tunnel) to the stopped origin.
            let fresh = HTTPClient(
                eventLoopGroupProvider: .singleton,
                configuration: .init(
                    tlsConfiguration: try Self.tlsTrusting(authority), proxy: .server(host: "127.0.0.1", port: port)))
            let outcome: (HTTPClientResponse, String)
            do {
                outcome = try await ProxyTests.get(fresh, url)
            } catch {
                try? await fresh.shutdown()
                throw error
            }
            try? await fresh.shutdown()
            let (response, body) = outcome
            #expect(response.status == .ok)
            #expect(body == "kept for offline")
        }
    }

    @Test(
        "a client's SNI names the certificate when the destination's own certificate verifies for that name; otherwise no certificate"
    )
    func certificateFromSNI() async throws {
        let both = TestOrigin(tls: try TestTLS(names: ["127.0.0.1", "localhost"]))
        try await both.start()
        try await withCleanup({ try? await both.stop() }) {
            both.route("/page") { _ in .text("named", headers: [("Cache-Control", "max-age=600")]) }
            let addressOnly = TestOrigin(tls: try TestTLS(name: "127.0.0.1", authority: both.tls?.authority))
            try await addressOnly.start()
            try await withCleanup({ try? await addressOnly.stop() }) {
                addressOnly.route("/page") { _ in .text("address only") }
                try await Self.withInterceptingProxy(trusting: both.tls?.authority) { port, _, authority in
                    // The client verifies the name "localhost": only a certificate minted from the SNI passes.
                    let named = try await TunnelClient.exchange(
                        proxyPort: port, target: "127.0.0.1:\(both.port)", tls: try Self.tlsTrusting(authority),
                        serverName: "localhost",
                        payload: "GET /page HTTP/1.1\r\nHost: 127.0.0.1:\(both.port)\r\nConnection: close\r\n\r\n")
                    #expect(named.received.hasPrefix("HTTP/1.1 200"), "\(named.received)")
                    #expect(named.received.contains("named"))
                    // This origin is not "localhost": the handshake fails, nothing is answered.
                    let refused = try? await TunnelClient.exchange(
                        proxyPort: port, target: "127.0.0.1:\(addressOnly.port)", tls: try Self.tlsTrusting(authority),
                        serverName: "localhost",
                        payload:
                            "GET /page HTTP/1.1\r\nHost: 127.0.0.1:\(addressOnly.port)\r\nConnection: close\r\n\r\n")
                    #expect(refused.map { !$0.received.contains("address only") } ?? true)
                    #expect(addressOnly.count("/page") == 0)
                }
            }
        }
    }

    @Test("large stored bodies and ranges of them go over TLS whole (bodies sent from files on plain connections)")
    func largeBodiesOverTLS() async throws {
        let originTLS = try TestTLS()
        try await TestOrigin.with(tls: originTLS) { origin in
            let body = Fixtures.patternedBytes(900 << 10)
            origin.route("/video.webm") { _ in
                TestOrigin.Response(
                    headers: [("Cache-Control", "max-age=600"), ("Content-Type", "video/webm"), ("ETag", "\"v\"")],
                    body: body)
            }
            try await Self.withInterceptingProxy(trusting: originTLS.authority) { _, client, _ in
                let url = origin.url("/video.webm").absoluteString
                for _ in 0..<3 {
                    let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                    let received = try await response.body.collect(upTo: 2 << 20)
                    #expect(byteDifference(received.readableBytesView, body) == nil)
                }
                var ranged = HTTPClientRequest(url: url)
                ranged.headers.add(name: "Range", value: "bytes=100000-700000")
                let partial = try await client.execute(ranged, timeout: .seconds(10))
                let slice = try await partial.body.collect(upTo: 2 << 20)
                #expect(partial.status == .partialContent)
                #expect(byteDifference(slice.readableBytesView, body[100_000...700_000]) == nil)
                #expect(origin.count("/video.webm") == 1)
            }
        }
    }

    @Test(
        "uploads inside an intercepted tunnel stream to the origin, of declared length or chunked, past what may be held"
    )
    func uploadsOverTLS() async throws {
        let originTLS = try TestTLS()
        let body = Fixtures.patternedBytes(6_000_000)
        try await TestOrigin.with(tls: originTLS) { origin in
            origin.route("/up") { request in
                .text("got \(request.body.count)", headers: [("Cache-Control", "no-store")])
            }
            // A body held whole could never fit in 2 MiB: it would be refused with 413.
            try await Self.withInterceptingProxy(
                trusting: originTLS.authority, configure: { $0.maximumBufferedRequestBodies = 2 << 20 }
            ) { _, client, _ in
                for length in [HTTPClientRequest.Body.Length.known(Int64(body.count)), .unknown] {
                    var request = HTTPClientRequest(url: origin.url("/up").absoluteString)
                    request.method = .PUT
                    let (pieces, source) = AsyncStream<ByteBuffer>.makeStream()
                    for start in stride(from: 0, to: body.count, by: 65_536) {
                        source.yield(ByteBuffer(bytes: body[start..<min(start + 65_536, body.count)]))
                    }
                    source.finish()
                    request.body = .stream(pieces, length: length)
                    let response = try await client.execute(request, timeout: .seconds(30))
                    let text = String(buffer: try await response.body.collect(upTo: 1 << 10))
                    #expect(response.status == .ok, "\(length): \(text)")
                    #expect(text == "got 6000000")
                }
                let received = origin.requests(to: "/up")
                #expect(received.map { $0.header("Transfer-Encoding") } == [nil, "chunked"])
                #expect(received.allSatisfy { byteDifference($0.body, body) == nil })
            }
        }
    }

    @Test("a proxy listening beyond loopback will not intercept without a list of hosts")
    func exposedNeedsHostList() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let network = AsyncHTTPClientOrigin()
        let cache = try HTTPCache(
            configuration: HTTPCache.Configuration(
                store: CacheStore.Configuration(directory: temporary.url), rules: .shared),
            origin: network)
        var configuration = ProxyConfiguration(host: "0.0.0.0", port: 0)
        configuration.tlsInterception = try TLSInterception(authority: try CertificateAuthority.make())
        let error = await #expect(throws: ProxyConfigurationError.self) {
            try await CachingProxy(cache: cache, configuration: configuration).run()
        }
        #expect(error?.code == .unsafeInterception && error?.message.contains("--intercept-host") == true)
        try await network.shutdown()
    }
}
