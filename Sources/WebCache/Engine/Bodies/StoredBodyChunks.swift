import HTTPCaching
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A stored body read from its file in chunks as it is iterated, never whole
/// (``ResponseBodyStream``'s source for large stored bodies).
///
/// Opened — its length and checksum checked — before the response is handed out, so a corrupt
/// body is found while the request can still be answered another way; the first iteration takes
/// that reader, a later one opens the file again.
final class StoredBodyChunks: Sendable {
    /// Bytes read at a time.
    static let chunkSize = 256 << 10

    private let store: CacheStore
    private let entry: CacheEntry
    /// The reader opened with the response, until the first iteration takes it.
    private let opened: Locked<UncheckedSendable<BodyReader>?>

    /// Opens `entry`'s body; throws (and the store removes the entry) when it is unusable.
    init(store: CacheStore, entry: CacheEntry) throws {
        self.store = store
        self.entry = entry
        self.opened = Locked(UncheckedSendable(try store.openBody(entry, chunkSize: Self.chunkSize)))
    }

    /// The body's size.
    var size: Int { entry.bodySize }

    /// A reader from the first byte: the one opened with the response the first time.
    func reader() throws -> BodyReader {
        let first = opened.withLock { opened in
            defer { opened = nil }
            return opened
        }
        return try first?.value ?? store.openBody(entry, chunkSize: Self.chunkSize)
    }

    /// The whole body.
    func collect() throws -> Data {
        let reader = try reader()
        var body = Data(capacity: size)
        while let chunk = try reader.next() { body.append(chunk) }
        return body
    }
}
