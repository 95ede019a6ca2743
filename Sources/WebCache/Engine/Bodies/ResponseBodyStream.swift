import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response body as chunks: from the cache at once (a large stored body read from its file a
/// chunk at a time), from the origin as it arrives.
///
/// Iterating it a second time starts again from the first chunk — except for the body of a
/// response the cache does not keep (not storable, passed through, a method's answer), which is
/// let go as it is read: reading it again past its first chunks throws a ``CacheError`` with code
/// `bodyAlreadyRead` (``collect()`` first to keep it).
public struct ResponseBodyStream: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    enum Source: Sendable {
        case complete(Data)
        case arriving(BodyBroadcast)
        case stored(StoredBodyChunks)
    }

    let source: Source

    init(source: Source) {
        self.source = source
    }

    /// A body that is already whole.
    public init(_ body: Data) {
        self.source = .complete(body)
    }

    /// The body when it is already whole (from the cache, or built in place); `nil` while it is
    /// still arriving from the origin.
    public var completeBody: Data? {
        if case .complete(let body) = source { return body }
        return nil
    }

    /// An iterator over the chunks.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let source: Source
        var index = 0
        /// A stored body's file, once the first chunk is asked for.
        private var reader: BodyReader?
        /// For a body arriving: held while this iterator is (a body read once is given up when
        /// its last reader goes before the end).
        private var lease: BodyLease?
        private var leased = false

        init(source: Source, index: Int = 0) {
            self.source = source
            self.index = index
        }

        /// The next chunk, or `nil` at the end; throws when the origin stopped half-way, or a
        /// stored body's file cannot be read. A task cancelled while it waits for bytes the origin
        /// has not sent yet stops waiting with a `CancellationError`; a body nothing else reads (not
        /// stored, not shared with another request) is then given up and its origin connection
        /// closed.
        public mutating func next() async throws -> Data? {
            defer { index += 1 }
            switch source {
            case .complete(let body):
                return index == 0 && !body.isEmpty ? body : nil
            case .arriving(let broadcast):
                if !leased {
                    lease = broadcast.leaseWhileArriving()
                    leased = true
                }
                return try await broadcast.take(at: index)
            case .stored(let chunks):
                if reader == nil { reader = try chunks.reader() }
                return try reader?.next()
            }
        }
    }

    /// Starts reading from the first chunk.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source) }

    /// Starts reading from the chunk at `index` (after those taken with ``arrivedChunk(at:)``).
    package func makeAsyncIterator(startingAt index: Int) -> AsyncIterator {
        AsyncIterator(source: source, index: index)
    }

    /// Holds the body as read until the value returned goes, for a reader that makes iterators
    /// one after another (``makeAsyncIterator(startingAt:)``) rather than keeping one: a body the
    /// cache does not keep (or stopped storing) is given up once no reader holds it before its
    /// end (its origin connection closed: nothing would read the rest). `nil` for a body that has
    /// all arrived.
    package func holdReading() -> AnyObject? {
        guard case .arriving(let broadcast) = source else { return nil }
        return broadcast.leaseWhileArriving()
    }

    /// The chunk at `index` if it is in memory now, without waiting; `nil` when it has not
    /// arrived (or is past the end, or was let go to a file: ``makeAsyncIterator(startingAt:)``
    /// reads those). A writer sends what has arrived in one write (a head with a small body in
    /// one packet) and waits only for what has not. It reads the body in order: asking for the
    /// chunk at `index` says it has the ones before (a body the cache does not keep lets them go).
    package func arrivedChunk(at index: Int) -> Data? {
        switch source {
        case .complete(let body): index == 0 && !body.isEmpty ? body : nil
        case .arriving(let broadcast): broadcast.arrivedChunk(at: index)
        case .stored: nil
        }
    }

    /// The whole body.
    public func collect() async throws -> Data {
        switch source {
        case .complete(let body): return body
        case .arriving(let broadcast): return try await broadcast.collect()
        case .stored(let chunks): return try chunks.collect()
        }
    }
}

/// What ``HTTPCache/streamingResponse(for:body:mode:interim:followRedirects:)`` answers: like ``CacheResponse``, with a
/// body that may still be arriving from the origin.
public struct StreamingCacheResponse: Sendable {
    /// The response head, carrying `Cache-Status` (RFC 9211).
    public var head: HTTPResponse
    /// The body (empty for HEAD and 304).
    public var body: ResponseBodyStream
    /// What the cache did.
    public var cacheStatus: CacheStatus
    /// The URL that answered.
    public var url: URL
}
