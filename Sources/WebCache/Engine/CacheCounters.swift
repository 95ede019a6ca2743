/// What the cache has done since it was created.
public struct CacheCounters: Sendable, Hashable, Codable {
    /// Requests handled.
    public var requests = 0
    /// Answered from the cache without the origin (fresh or allowed stale).
    public var hits = 0
    /// Sent to the origin because nothing usable was stored.
    public var misses = 0
    /// Stored responses validated with the origin.
    public var revalidations = 0
    /// Stale responses served (stale-while-revalidate, stale-if-error, offline, prefer-cache).
    public var staleServed = 0
    /// Requests that passed through uncached (disabled, not allowed, unsafe methods).
    public var bypassed = 0
    /// Requests answered by the block-list.
    public var blocked = 0
    /// Requests that did not try an origin known to be unreachable (answered offline or failed
    /// at once).
    public var unreachableSkips = 0
    /// Stored responses served because the origin had not answered within the network timeout.
    public var networkTimeouts = 0
    /// Times the store failed under a request (a full disk, a corrupt body or index) and the
    /// request went on without it.
    public var storeProblems = 0
    /// Body bytes served from the cache.
    public var bytesFromCache = 0
    /// Body bytes received from the origin.
    public var bytesFromOrigin = 0

    /// Creates zeroed counters.
    public init() {}
}
