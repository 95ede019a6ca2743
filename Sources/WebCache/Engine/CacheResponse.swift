import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What ``HTTPCache`` answers: the response head (with `Age` and `Cache-Status`), the body, and
/// what the cache did.
public struct CacheResponse: Sendable {
    /// The response head, carrying `Cache-Status` (RFC 9211).
    public var head: HTTPResponse
    /// The body (empty for HEAD and 304).
    public var body: Data
    /// What the cache did, as also written in `Cache-Status`.
    public var cacheStatus: CacheStatus
    /// The URL that answered (after redirects, when they were followed).
    public var url: URL
    /// A body still arriving from the origin; ``body`` is empty until it is collected.
    var arriving: BodyBroadcast? = nil
    /// A stored entry whose body is to be sent straight from its file instead of ``body`` (which
    /// is then empty); only when asked for (see `HTTPCache.storedResponse(for:mode:bodyFilesFrom:)`).
    package var bodyFile: CacheEntry? = nil
    /// Whether the body is to be sent from ``bodyFile`` (``HTTPCache/openBodyFile(of:)``).
    package var hasBodyFile: Bool { bodyFile != nil }
    /// The bytes of ``bodyFile`` to send, when only a range of it is (a 206); the whole file
    /// when `nil`.
    package var bodyRange: Range<Int>? = nil
    /// For a fresh answer from the store: the terms on which the same request may get it again
    /// (see ``RepeatableAnswer``).
    package var repeatable: RepeatableAnswer? = nil

    /// Whether the response came from the cache without contacting the origin.
    public var isFromCache: Bool { cacheStatus.hit }
}
