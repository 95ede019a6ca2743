import Foundation
import HTTPCaching
import WebCache
import WebCacheProxy
import WebCacheStore

/// A reverse proxy over a shared cache in a temporary directory, in front of an
/// ``InMemoryOrigin``, whose connections are ``ProxyConnection``s: the proxy's connection
/// handling, whole, at the speed of function calls.
public final class SocketlessProxy: Sendable {
    /// The proxy.
    public let proxy: CachingProxy
    /// The cache behind it.
    public let cache: HTTPCache
    /// The origin behind the cache.
    public let origin: InMemoryOrigin
    private let directory: TemporaryDirectory

    /// A proxy for `origin` (``InMemoryOrigin/cacheable()`` unless given) with `configure`'s
    /// settings; its upstream is `http://origin.test/`, which no socket ever reaches. With a
    /// `clock`, the cache reads the time from it (ages, freshness); `adjust` changes the cache's
    /// configuration (its policy, say).
    public init(
        origin: InMemoryOrigin = .cacheable(), clock: TestClock? = nil,
        configure: (inout ProxyConfiguration) -> Void = { _ in },
        adjust: (inout HTTPCache.Configuration) -> Void = { _ in }
    ) throws {
        directory = try TemporaryDirectory(prefix: "webcache-socketless")
        self.origin = origin
        var configuration = HTTPCache.Configuration(
            store: CacheStore.Configuration(directory: directory.url), rules: .shared)
        if let clock { configuration.now = { clock.now } }
        adjust(&configuration)
        cache = try HTTPCache(configuration: configuration, origin: origin)
        var proxyConfiguration = ProxyConfiguration(port: 0, upstream: URL(string: "http://origin.test/"))
        configure(&proxyConfiguration)
        proxy = CachingProxy(cache: cache, configuration: proxyConfiguration)
    }

    /// A new client connection.
    public func connect() async throws -> ProxyConnection {
        try await ProxyConnection.open(to: proxy)
    }

    /// Runs `body` with a proxy and removes its cache afterwards.
    public static func with<Result>(
        origin: InMemoryOrigin = .cacheable(), clock: TestClock? = nil,
        configure: (inout ProxyConfiguration) -> Void = { _ in },
        adjust: (inout HTTPCache.Configuration) -> Void = { _ in },
        _ body: (SocketlessProxy) async throws -> Result
    ) async throws -> Result {
        let proxy = try SocketlessProxy(origin: origin, clock: clock, configure: configure, adjust: adjust)
        do {
            let result = try await body(proxy)
            await proxy.remove()
            return result
        } catch {
            await proxy.remove()
            throw error
        }
    }

    /// Waits for the cache's background work and deletes its directory.
    public func remove() async {
        await cache.waitForBackgroundWork()
        directory.remove()
    }
}
