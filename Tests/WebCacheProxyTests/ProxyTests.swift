import AsyncHTTPClient
import Foundation
import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing
import WebCache
import WebCacheNIO
import WebCacheProxy
import WebCacheStore
import WebCacheTestSupport

@Suite("The caching proxy, end to end", .serialized)
struct ProxyTests {
    /// Runs a proxy over a shared cache in front of `origin`; tears everything down afterwards.
    /// With a `clock`, the cache reads the time from it (ages, freshness, replays), so that a
    /// test moves time on instead of sleeping.
    ///
    /// The origin gets `originTimeout` for each chunk. Tests that hold an origin's body at a gate
    /// keep it waiting for as long as their own steps take, and a loaded suite on two cores can
    /// keep a test's task from running for seconds: with 3 s, the proxy gave up on the held body
    /// about once in twenty full runs (`pipelinedBehindMiss`).
    static func withProxy(
        _ origin: TestOrigin, reverse: Bool = true, allowed: [String] = [], cacheDirectory: URL? = nil,
        connectTimeout: Duration = .seconds(10), originTimeout: Duration = .seconds(30),
        clock: TestClock? = nil,
        configure: (inout ProxyConfiguration) -> Void = { _ in },
        adjust: (inout HTTPCache.Configuration) -> Void = { _ in },
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        made: (HTTPCache) -> Void = { _ in },
        _ body: (Int, HTTPClient) async throws -> Void
    ) async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = cacheDirectory ?? temporary.url
        let network = try SwiftNIOOrigin(connectTimeout: connectTimeout, timeout: originTimeout)
        var cacheConfiguration = HTTPCache.Configuration(
            store: CacheStore.Configuration(directory: directory), rules: .shared)
        if let clock { cacheConfiguration.now = { clock.now } }
        adjust(&cacheConfiguration)
        let cache = try HTTPCache(configuration: cacheConfiguration, origin: network)
        made(cache)
        var configuration = ProxyConfiguration(
            port: 0, upstream: reverse ? origin.url("/") : nil, allowedDestinations: allowed)
        configure(&configuration)
        let proxy = CachingProxy(cache: cache, configuration: configuration, group: group)
        let serving = Task { try await proxy.run() }
        let proxyPort = try await boundPort(of: proxy)
        let client = HTTPClient(
            eventLoopGroupProvider: .singleton,
            configuration: .init(proxy: reverse ? nil : .server(host: "127.0.0.1", port: proxyPort)))
        do {
            try await body(proxyPort, client)
        } catch {
            try? await client.shutdown()
            serving.cancel()
            _ = await serving.result
            try? await network.shutdown()
            throw error
        }
        try await client.shutdown()
        serving.cancel()
        _ = await serving.result
        try await network.shutdown()
    }

    /// The proxy's port once it listens (within ten seconds: two were too few for six tests at
    /// once under AddressSanitizer, and a loaded machine is as slow now and then).
    static func boundPort(of proxy: CachingProxy) async throws -> Int {
        for _ in 0..<1_000 {
            if let port = proxy.port { return port }
            try await Task.sleep(for: .milliseconds(10))
        }
        return try #require(proxy.port, "the proxy did not start listening")
    }

    static func get(_ client: HTTPClient, _ url: String, method: NIOHTTP1Method = .GET, body: String? = nil)
        async throws -> (HTTPClientResponse, String)
    {
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(10))
        let bytes = try await response.body.collect(upTo: 10 << 20)
        return (response, String(buffer: bytes))
    }

    @Test("reverse mode: misses go upstream once, hits carry Age, Via and Cache-Status; private is never stored")
    func reverse() async throws {
        try await TestOrigin.with { origin in
            origin.route("/page") { _ in .text("shared page", headers: [("Cache-Control", "max-age=600")]) }
            origin.route("/mine") { _ in .text("private page", headers: [("Cache-Control", "private, max-age=600")]) }
            origin.route("/form") { request in .text("received \(request.body.count)") }
            try await Self.withProxy(origin) { port, client in
                let base = "http://127.0.0.1:\(port)"
                let (first, firstBody) = try await Self.get(client, base + "/page")
                #expect(firstBody == "shared page")
                #expect(first.headers.first(name: "Cache-Status")?.contains("fwd=uri-miss") == true)
                let (second, _) = try await Self.get(client, base + "/page")
                #expect(second.headers.first(name: "Cache-Status")?.hasPrefix("WebCache; hit") == true)
                #expect(second.headers.first(name: "Age") != nil)
                #expect(second.headers.first(name: "Via")?.contains("webcache") == true)
                #expect(origin.count("/page") == 1)
                _ = try await Self.get(client, base + "/mine")
                _ = try await Self.get(client, base + "/mine")
                #expect(origin.count("/mine") == 2)
                let (_, posted) = try await Self.get(client, base + "/form", method: .POST, body: "a=1&b=2")
                #expect(posted == "received 7")
            }
        }
    }

    @Test(
        "the connection's fields stay behind on both legs, those Connection names included; Via gains this proxy, appended to the one a message has"
    )
    func connectionFieldsAndVia() async throws {
        try await TestOrigin.with { origin in
            let seen = Locked<[(String, String)]>([])
            origin.route("/echo") { request in
                seen.withLock { $0 = request.headers }
                return .text(
                    "echo",
                    headers: [
                        ("Cache-Control", "no-store"), ("Via", "1.0 upstream"),
                        ("Connection", "keep-alive, X-Origin-Private"), ("X-Origin-Private", "o"), ("X-Origin", "1"),
                    ])
            }
            try await Self.withProxy(origin) { port, _ in
                let answer = try await RawHTTPClient.exchange(
                    port: port,
                    "GET /echo HTTP/1.1\r\nHost: x\r\nConnection: X-Private, close\r\nX-Private: secret\r\n"
                        + "Keep-Alive: timeout=5\r\nVia: 1.1 earlier\r\nX-Kept: 1\r\n\r\n")
                let received = seen.withLock { $0 }
                let names = received.map { $0.0.lowercased() }
                #expect(!names.contains("x-private") && !names.contains("keep-alive"), "\(names)")
                #expect(names.contains("x-kept"))
                #expect(received.filter { $0.0.lowercased() == "via" }.map(\.1) == ["1.1 earlier, 1.1 webcache"])
                let answered = answer.lowercased()
                #expect(answered.hasPrefix("http/1.1 200"))
                #expect(answered.contains("\r\nvia: 1.0 upstream, 1.1 webcache\r\n"), "\(answer)")
                #expect(!answered.contains("x-origin-private") && answered.contains("\r\nx-origin: 1\r\n"))
            }
        }
    }

    @Test(
        "a miss reaches the index once: the trip to the origin the proxy's synchronous path found is taken as decided, not looked up again"
    )
    func missLookedUpOnce() async throws {
        try await TestOrigin.with { origin in
            origin.route("/new") { _ in .text("new", headers: [("Cache-Control", "max-age=600")]) }
            origin.route("/unstored") { _ in .text("unstored", headers: [("Cache-Control", "no-store")]) }
            let made = Locked<HTTPCache?>(nil)
            try await Self.withProxy(origin, made: { cache in made.withLock { $0 = cache } }) { port, client in
                let store = try #require(made.withLock { $0 }).store
                let base = "http://127.0.0.1:\(port)"
                for (index, path) in ["/new?a", "/new?b", "/unstored?c", "/unstored?d"].enumerated() {
                    let before = store.indexLookups
                    let (response, _) = try await Self.get(client, base + path)
                    #expect(response.status == .ok)
                    #expect(store.indexLookups - before == 1, "request \(index + 1) (\(path)): index lookups")
                }
                #expect(origin.count("/new") == 2 && origin.count("/unstored") == 2)
            }
        }
    }

    @Test(
        "the metrics say what the memory tier holds and how many lookups it left to the index: none for hits it holds, every one without it",
        arguments: [32 << 20, 0])
    func memoryTierMetrics(memoryCapacity: Int) async throws {
        try await TestOrigin.with { origin in
            origin.route("/m") { _ in .text("kept", headers: [("Cache-Control", "max-age=600")]) }
            let made = Locked<HTTPCache?>(nil)
            try await Self.withProxy(
                origin, adjust: { $0.store.memoryCapacity = memoryCapacity },
                made: { cache in made.withLock { $0 = cache } }
            ) { port, client in
                let cache = try #require(made.withLock { $0 })
                let base = "http://127.0.0.1:\(port)"
                for path in ["/m?a", "/m?b"] { _ = try await Self.get(client, base + path) }
                // Hits once the entries are in the index (a hit never waits for that); the first
                // hit of each may read it from the index.
                try await Self.untilIndexHas(2, cache)
                for path in ["/m?a", "/m?b"] { _ = try await Self.get(client, base + path) }
                let before = cache.indexLookups
                for path in ["/m?a", "/m?b", "/m?a"] {
                    let (response, _) = try await Self.get(client, base + path)
                    #expect(response.headers.first(name: "Cache-Status")?.contains("hit") == true)
                }
                let lookups = cache.indexLookups
                #expect(lookups - before == (memoryCapacity > 0 ? 0 : 3))
                #expect((cache.memoryTierBytes > 0) == (memoryCapacity > 0))
                let (_, page) = try await Self.get(client, base + "/_webcache/metrics")
                #expect(Self.metric("webcache_index_lookups_total", in: page) == Double(lookups), "\(page)")
                #expect(Self.metric("webcache_memory_bytes", in: page) == Double(cache.memoryTierBytes))
                #expect(origin.count("/m") == 2)
            }
        }
    }

    /// Returns once the cache's store has `entries` entries in its index, or after five seconds.
    /// Waiting for what is on its way is not enough: a miss's entry is submitted once the pump
    /// has passed the body's end, which can come after the client has read all of it. (The
    /// statistics wait for the entries submitted.)
    static func untilIndexHas(_ entries: Int, _ cache: HTTPCache) async throws {
        for _ in 0..<500 {
            if try cache.store.statistics().entries >= entries { return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The value of the metric `name` (a line `name value`) on a metrics page.
    static func metric(_ name: String, in page: String) -> Double? {
        page.split(separator: "\n").first { $0.hasPrefix(name + " ") }
            .flatMap { Double($0.dropFirst(name.count + 1)) }
    }

    @Test("forward mode: absolute-form requests are cached; destinations outside the allow-list are refused")
    func forward() async throws {
        try await TestOrigin.with { origin in
            origin.route("/f") { _ in .text("forwarded", headers: [("Cache-Control", "max-age=600")]) }
            try await Self.withProxy(origin, reverse: false, allowed: ["127.0.0.1"]) { port, _ in
                let request =
                    "GET \(origin.url("/f").absoluteString) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\nConnection: close\r\n\r\n"
                let first = try await RawHTTPClient.exchange(port: port, request)
                #expect(first.hasPrefix("HTTP/1.1 200") && first.hasSuffix("forwarded"))
                let second = try await RawHTTPClient.exchange(port: port, request)
                #expect(second.contains("Cache-Status: WebCache; hit"))
                #expect(origin.count("/f") == 1)
                let elsewhere =
                    "GET http://localhost:\(origin.port)/f HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                #expect(try await RawHTTPClient.exchange(port: port, elsewhere).hasPrefix("HTTP/1.1 403"))
                let relative = "GET /f HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                #expect(try await RawHTTPClient.exchange(port: port, relative).hasPrefix("HTTP/1.1 400"))
            }
        }
    }

    @Test("malformed requests get 400 and the connection is closed, never a crash")
    func malformed() async throws {
        try await TestOrigin.with { origin in
            try await Self.withProxy(origin) { port, _ in
                let garbage = try await RawHTTPClient.exchange(port: port, "THIS IS NOT HTTP\r\n\r\n")
                #expect(garbage.hasPrefix("HTTP/1.1 400"))
                let badHeader = try await RawHTTPClient.exchange(
                    port: port, "GET / HTTP/1.1\r\nBad Header Line\r\n\r\n")
                #expect(badHeader.hasPrefix("HTTP/1.1 400"))
            }
        }
    }

    @Test("an unreachable upstream gets 504, not a hang")
    func upstreamDown() async throws {
        let origin = TestOrigin()
        try await origin.start()
        try await Self.withProxy(origin) { port, client in
            try await origin.stop()
            let (response, _) = try await Self.get(client, "http://127.0.0.1:\(port)/gone")
            #expect(response.status.code == 504)
        }
    }
}

typealias NIOHTTP1Method = NIOHTTP1.HTTPMethod
