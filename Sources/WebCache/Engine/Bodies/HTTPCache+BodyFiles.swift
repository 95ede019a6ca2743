import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A stored body file opened for sending without reading it (`sendfile` at explicit offsets).
/// The store keeps hot files open and hands the same one to many answers: the descriptor stays
/// open while any holder of this value lives, and must not be closed by a holder.
package struct OpenedBodyFile: Sendable {
    private let file: OpenBodyFile

    init(_ file: OpenBodyFile) {
        self.file = file
    }

    /// The open, read-only descriptor.
    package var descriptor: Int32 { file.descriptor }
    /// The body's length in bytes.
    package var size: Int { file.size }
}

/// Stored bodies handed out as files, so that a front door (the proxy) sends them without
/// knowing the store.
extension HTTPCache {
    /// The body file of `response` (``CacheResponse/hasBodyFile``), opened; `nil` when it has
    /// none, or when the file is no longer usable (removed, or not verified whole): then ask the
    /// engine again, which reads and checks it.
    package func openBodyFile(of response: CacheResponse) -> OpenedBodyFile? {
        response.storedFile.flatMap { openBodyFile(of: $0.entry) }
    }

    /// The body file of the entry an answer's replay terms was made from, opened; `nil` when it is no
    /// longer usable.
    package func openBodyFile(of answer: ReplayTerms) -> OpenedBodyFile? {
        openBodyFile(of: answer.entry)
    }

    /// Where the cache keeps its files: a front door's own files (the proxy's replayed answers)
    /// go beside the bodies, on the same file system.
    package var directory: URL {
        store.configuration.directory
    }

    private func openBodyFile(of entry: CacheEntry) -> OpenedBodyFile? {
        store.openVerifiedBodyFile(entry).map(OpenedBodyFile.init)
    }
}
