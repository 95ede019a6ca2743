import HTTPCaching
import HTTPTypes
import Logging
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// Everything an ``HTTPCache`` is made of.
    public struct Configuration: Sendable {
        /// Where and how much is stored.
        public var store: CacheStore.Configuration
        /// The HTTP caching rules: `CacheRules.private` for an app (the default),
        /// `CacheRules.shared` for a proxy.
        public var rules: CacheRules
        /// The app's rules on top (lifetimes, allow and block lists, offline use).
        public var policy: CachePolicy
        /// The name this cache gives itself in `Cache-Status`.
        public var cacheName: String
        /// Whom the cache serves offline, which decides what it may serve when the origin is
        /// unreachable: ``OfflinePosture/personal`` for one user's app or browser (the default
        /// with private rules), ``OfflinePosture/shared`` for a cache many users share in front of
        /// an origin (the default with shared rules).
        public var offlinePosture: OfflinePosture
        /// How long a request waits for the origin when a stored response could answer it
        /// offline, before that response is served (`Cache-Status: …; detail=network-timeout`)
        /// while the exchange goes on in the background. Used when the policy does not set
        /// ``CachePolicy/networkTimeout``; `nil` waits as long as the origin client does.
        public var networkTimeout: Duration?
        /// How long origins that could not be reached are left alone; `nil` tries every time.
        public var reachability: ReachabilitySettings?
        /// How many redirects ``HTTPCache/response(for:body:mode:followRedirects:)`` follows.
        public var maximumRedirects: Int
        /// Called before a response is stored: return it (changed or not) to store it, or `nil`
        /// to refuse (like `URLSessionDataDelegate`'s `willCacheResponse`).
        public var willCache: (@Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse?)?
        /// The clock.
        public var now: @Sendable () -> Date
        /// Where the cache logs.
        public var logger: Logger
        /// Changes whenever the settings change at run time, so that answers worked out under
        /// the old ones are not replayed (``HTTPCache/confirmReplay(_:)``).
        var revision: UInt64 = 0

        /// A configuration for a private cache in `directory`.
        public init(
            directory: URL, rules: CacheRules = .private, policy: CachePolicy = .init(),
            cacheName: String = "WebCache", logger: Logger = Logger(label: "WebCache")
        ) {
            var store = CacheStore.Configuration(directory: directory)
            store.logger = logger
            self.init(store: store, rules: rules, policy: policy, cacheName: cacheName, logger: logger)
        }

        /// A configuration with explicit store settings.
        public init(
            store: CacheStore.Configuration, rules: CacheRules = .private, policy: CachePolicy = .init(),
            cacheName: String = "WebCache", maximumRedirects: Int = 10,
            now: @escaping @Sendable () -> Date = { Date() }, logger: Logger = Logger(label: "WebCache")
        ) {
            self.store = store
            self.rules = rules
            self.offlinePosture = rules.kind.shared ? .shared : .personal
            self.networkTimeout = .seconds(5)
            self.reachability = ReachabilitySettings()
            self.policy = policy
            self.cacheName = cacheName
            self.maximumRedirects = maximumRedirects
            self.now = now
            self.logger = logger
        }

        /// The network timeout in force under `policy`: the policy's (0 turns it off), else
        /// the configuration's.
        public func networkTimeout(under policy: CachePolicy) -> Duration? {
            Self.networkTimeout(under: policy, otherwise: networkTimeout)
        }

        /// The policy's network timeout (0 turns it off), else `configured`.
        static func networkTimeout(under policy: CachePolicy, otherwise configured: Duration?) -> Duration? {
            guard let seconds = policy.networkTimeout else { return configured }
            // Counted up to 2^31 s, as TTLs are: past Int64's milliseconds a conversion would trap.
            return seconds > 0 ? .milliseconds(Int64((min(seconds, Double(WholeSeconds.limit)) * 1000).rounded())) : nil
        }
    }

    /// Whom a cache serves offline (see ``Configuration/offlinePosture``).
    public enum OfflinePosture: String, Sendable, Hashable, CaseIterable {
        /// One user's cache (an app, a browser behind a forward proxy on loopback): when the
        /// origin is unreachable, stored responses are served within
        /// ``CachePolicy/offlineMaxStale`` even where RFC 9111 §4.2.4 would have them validated
        /// (`no-cache`, `must-revalidate`, `s-maxage`), unless ``CachePolicy/offlineStrict``;
        /// pages and resources a preload manifest holds are served offline in any case.
        case personal
        /// A cache shared by many users in front of an origin (a reverse proxy): offline, only
        /// what RFC 9111 allows unvalidated is served.
        case shared
    }
}
