import Foundation
import HTTPCaching
import HTTPTypes
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheStore

/// For engine tests: an origin, a cache in a temporary directory and a clock; `run` tears all of it down.
public struct EngineHarness: Sendable {
    /// The origin the cache fetches from.
    public let origin: TestOrigin
    /// The cache under test.
    public let cache: HTTPCache
    /// The clock the cache reads; tests move it.
    public let clock: TestClock
    /// The origin client.
    public let network: AsyncHTTPClientOrigin
    /// The cache's directory.
    public let directory: URL

    /// Runs `body` with a fresh origin, cache and clock, and stops them after. A connection to
    /// the local origin is given 10 s (`connectTimeout`): it takes microseconds, and a tighter
    /// bound only ever failed a test when the whole suite had the machine's two cores busy
    /// (AsyncHTTPClient's connect and pool waits both run out at it).
    public static func run(
        rules: CacheRules = .private, policy: CachePolicy = .init(), connectTimeout: Duration = .seconds(10),
        adjust: (inout HTTPCache.Configuration) -> Void = { _ in },
        _ body: (EngineHarness) async throws -> Void
    ) async throws {
        let origin = TestOrigin()
        try await origin.start()
        let directory = try TemporaryDirectory()
        let clock = TestClock()
        let network = AsyncHTTPClientOrigin(connectTimeout: connectTimeout, timeout: .seconds(10))
        var configuration = HTTPCache.Configuration(
            store: CacheStore.Configuration(directory: directory.url), rules: rules, policy: policy, now: { clock.now })
        adjust(&configuration)
        do {
            let cache = try HTTPCache(configuration: configuration, origin: network)
            try await body(
                EngineHarness(origin: origin, cache: cache, clock: clock, network: network, directory: directory.url))
            await cache.waitForBackgroundWork()
        } catch {
            try? await network.shutdown()
            try? await origin.stop(holdingPort: false)
            directory.remove()
            throw error
        }
        try await network.shutdown()
        try await origin.stop(holdingPort: false)
        directory.remove()
    }

    /// GETs `path` from the origin through the cache.
    public func get(_ path: String, _ headers: [String] = [], mode: RequestMode = .default, follow: Bool = false)
        async throws -> CacheResponse
    {
        try await cache.response(
            for: Fixtures.request(.get, origin.url(path).absoluteString, headers), mode: mode, followRedirects: follow)
    }

    /// Sends `method` for `path` through the cache.
    public func send(_ method: HTTPRequest.Method, _ path: String, body: Data? = nil, _ headers: [String] = [])
        async throws -> CacheResponse
    {
        try await cache.response(for: Fixtures.request(method, origin.url(path).absoluteString, headers), body: body)
    }
}

extension CacheResponse {
    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The `Cache-Status` field, or empty.
    public var statusLine: String { head.headerFields[.cacheStatus] ?? "" }
}
