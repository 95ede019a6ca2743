#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheStore {
    /// Whether `entry`'s body is in a file whose checksum this process has already verified, so
    /// that it can be sent straight from the file (``openVerifiedBodyFile(_:)``).
    package func hasVerifiedBodyFile(_ entry: CacheEntry) -> Bool {
        guard entry.body.file != nil else { return false }
        return verifiedBodies.withLock { $0.contains(entry.id) }
    }

    /// Checks `entry`'s body file against its length and checksum, reading it a chunk at a time
    /// rather than into memory, once per process: then it can be sent from the file
    /// (``openVerifiedBodyFile(_:)``). `false` when the body is not in a file alone, or the file
    /// is unusable — then the entry is removed, as ``readBody(_:)`` removes it.
    package func verifyBodyFile(_ entry: CacheEntry) -> Bool {
        if hasVerifiedBodyFile(entry) { return true }
        guard case .file = entry.body else { return false }
        return (try? checkBodyFile(entry)) != nil
    }

    /// ``verifyBodyFile(_:)`` that says why: throws (and removes the entry) when `entry`'s body
    /// file is unusable; does nothing for a body not in a file, or one checked already.
    package func checkBodyFile(_ entry: CacheEntry) throws {
        guard entry.body.file != nil, !hasVerifiedBodyFile(entry) else { return }
        // Opening checks the file; the reader itself is not needed (the chunk size is moot).
        _ = try openBody(entry, chunkSize: 1)
    }

    /// `entry`'s body file, open and read-only, for sending it without reading it into memory
    /// (`sendfile` at explicit offsets). The store keeps hot files open (``OpenBodyFile``), so
    /// the same file may go to many answers at once; it closes when the last lets go. `nil`
    /// unless the file's checksum was verified in this process and its length still matches the
    /// index: then read the body with ``readBody(_:)``, which checks it and removes a broken
    /// entry.
    package func openVerifiedBodyFile(_ entry: CacheEntry) -> OpenBodyFile? {
        guard let name = entry.body.file?.name, hasVerifiedBodyFile(entry) else { return nil }
        if let file = openBodies.file(of: entry.id, name: name, size: entry.bodySize) { return file }
        guard let (fd, size) = try? POSIX.openBodyForReading(files.path(name)) else { return nil }
        guard size == entry.bodySize else {
            POSIX.closeFile(fd)
            return nil
        }
        let file = OpenBodyFile(descriptor: fd, size: entry.bodySize, name: name)
        openBodies.keep(file, for: entry.id)
        // Removed meanwhile (finishRemoval lets go after it forgets the verification): not kept.
        if !hasVerifiedBodyFile(entry) { openBodies.forget([entry.id]) }
        return file
    }

    /// The bytes `range` of `entry`'s body (within its size), for a range request: read from
    /// the file alone, once this process has verified it — a chunk at a time the first time, so
    /// that a range costs its own size in memory, not the body's (a broken body is removed and
    /// this throws); an inline body by ``readBody(_:)``.
    public func readBody(_ entry: CacheEntry, range: Range<Int>) throws -> Data {
        let range = range.clamped(to: 0..<entry.bodySize)
        try checkBodyFile(entry)
        if let file = openVerifiedBodyFile(entry) {
            let data = try POSIX.readAt(file.descriptor, offset: range.lowerBound, count: range.count)
            guard data.count == range.count else {
                let error = StoreError(.corruptBody, "the body file of \(entry.key) is shorter than the index says")
                discardBroken(entry, because: error)
                throw error
            }
            return data
        }
        let whole = try readBody(entry)
        return whole.subdata(in: range.clamped(to: 0..<whole.count))
    }
}
