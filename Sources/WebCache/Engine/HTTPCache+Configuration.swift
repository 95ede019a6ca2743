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
        /// The HTTP caching rules: ``CacheRules/private`` for an app (the default),
        /// ``CacheRules/shared`` for a proxy.
        public var rules: CacheRules
        /// The app's rules on top (lifetimes, allow and block lists, offline use).
        public var policy: CachePolicy
        /// The name this cache gives itself in `Cache-Status`.
        public var cacheName: String
        /// How many redirects ``HTTPCache/response(for:body:mode:followRedirects:)`` follows.
        public var maximumRedirects: Int
        /// Called before a response is stored: return it (changed or not) to store it, or `nil`
        /// to refuse (seed 003 `willCacheResponse`).
        public var willCache: (@Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse?)?
        /// The clock.
        public var now: @Sendable () -> Date
        /// Where the cache logs.
        public var logger: Logger
        /// Changes whenever the settings change at run time, so that answers worked out under
        /// the old ones are not repeated (``HTTPCache/repeatAnswer(_:)``).
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
            self.policy = policy
            self.cacheName = cacheName
            self.maximumRedirects = maximumRedirects
            self.now = now
            self.logger = logger
        }
    }
}
