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
    /// Where the body is (in memory, in a stored entry's file, or still arriving).
    var content: Content
    /// What the cache did, as also written in `Cache-Status`.
    public var cacheStatus: CacheStatus
    /// The URL that answered (after redirects, when they were followed).
    public var url: URL
    /// For a fresh answer from the store: the terms on which the same request may get it again
    /// (see ``ReplayTerms``).
    package var replayTerms: ReplayTerms? = nil

    /// Where a response's body is: one of three, never a mix.
    enum Content: Sendable {
        /// In memory (empty for HEAD and 304).
        case bytes(Data)
        /// Bytes `range` of a stored entry's body file, to be sent from the file without being
        /// read; only when asked for (see `HTTPCache.storedAnswer(for:url:bodyFilesFrom:sharing:)`).
        case storedFile(CacheEntry, range: Range<Int>)
        /// Still arriving from the origin.
        case arriving(BodyBroadcast)
    }

    init(head: HTTPResponse, content: Content, cacheStatus: CacheStatus, url: URL) {
        self.head = head
        self.content = content
        self.cacheStatus = cacheStatus
        self.url = url
    }

    init(head: HTTPResponse, body: Data, cacheStatus: CacheStatus, url: URL) {
        self.init(head: head, content: .bytes(body), cacheStatus: cacheStatus, url: url)
    }

    /// The body (empty for HEAD and 304). A response from ``HTTPCache/response(for:body:mode:followRedirects:)``
    /// always has it in memory.
    public var body: Data {
        get {
            if case .bytes(let body) = content { return body }
            return Data()
        }
        set { content = .bytes(newValue) }
    }

    /// Whether the body is to be sent from a stored entry's file (``HTTPCache/openBodyFile(of:)``).
    package var hasBodyFile: Bool { storedFile != nil }

    /// The stored entry whose file holds the body, and the bytes of it to send.
    package var storedFile: (entry: CacheEntry, range: Range<Int>)? {
        if case .storedFile(let entry, let range) = content { return (entry, range) }
        return nil
    }

    /// Whether the response came from the cache without contacting the origin.
    public var isFromCache: Bool { cacheStatus.hit }
}
