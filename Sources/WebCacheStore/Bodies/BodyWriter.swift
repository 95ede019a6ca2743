import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Streams one response body into the store: small bodies are buffered and go inline in the
/// index, larger ones into a file of their own (a spare one when there is, see the store's
/// guarantees), which only ``commit()`` gives a row: until then no lookup can reach it, and
/// recovery deletes a file without a row.
///
/// A body that grows past ``CacheStore/Configuration/maximumEntrySize`` is dropped quietly —
/// ``isAbandoned`` turns true, later writes are ignored and ``commit()`` returns `nil` — so the
/// caller can keep serving it without storing it. An I/O failure (a full disk) throws, removes
/// the file and leaves every earlier entry untouched. A writer dropped without
/// ``commit()`` cleans up after itself.
///
/// A writer belongs to one task at a time.
public final class BodyWriter {
    private let store: CacheStore
    private(set) var entry: NewEntry
    let key: CacheKey
    let varyKey: String
    private var buffer = Data()
    private var fd: Int32 = -1
    private var fileName: String?
    /// The bytes the spare file taken for the body held (written over; the rest cut off).
    private var heldBySpareFile = 0
    /// The size announced with ``expect(size:)``, if any.
    private var expectedSize: Int?
    /// The bytes the file was given blocks for up front (the rest cut off when it ends short).
    private var reserved = 0
    private var crc = CRC32()
    private var closed = false

    /// Bytes written so far.
    public private(set) var size = 0
    /// Whether the body grew past the store's maximum entry size and will not be stored.
    public private(set) var isAbandoned = false

    init(store: CacheStore, entry: NewEntry, key: CacheKey, varyKey: String) {
        self.store = store
        self.entry = entry
        self.key = key
        self.varyKey = varyKey
    }

    deinit {
        discardFile()
    }

    /// Says how large the body will be, before the first write (``CacheStore/store(_:body:)``
    /// does, with the whole body at hand). A body stored in a file then has the file's
    /// blocks found in one go when the file is made (Linux `fallocate`, which keeps the size),
    /// rather than a page at a time as its bytes come: a megabyte costs the kernel about a
    /// quarter less, and a large body lies in fewer pieces on disk. A disk without room for the
    /// whole body fails the write that makes the file (a ``StoreError`` with code `.ioFailure`)
    /// instead of one half-way through; a body that ends short of the size gives back the blocks
    /// it did not use when it is committed. (The engine does not announce a streamed body: on a
    /// core shared with the index writer, a full cache's slowest misses got slower.)
    public func expect(size: Int) {
        expectedSize = size
    }

    /// Appends bytes to the body.
    public func write(_ bytes: some DataProtocol) throws {
        // The pointer is only valid inside the closure (a small Data keeps its bytes inline).
        let wroteContiguous =
            try bytes.withContiguousStorageIfAvailable { try write(UnsafeRawBufferPointer($0)) } != nil
        if !wroteContiguous {
            try Data(bytes).withUnsafeBytes { try write($0) }
        }
    }

    /// Appends bytes to the body.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !closed else { throw StoreError(.closed, "the body writer for \(key) is already closed") }
        guard !isAbandoned, !bytes.isEmpty else { return }
        let configuration = store.configuration
        guard size + bytes.count <= configuration.maximumEntrySize else {
            abandon()
            return
        }
        do {
            try configuration.writeFault?(size)
            if fd < 0 && buffer.count + bytes.count <= configuration.inlineBodyLimit {
                buffer.append(contentsOf: bytes)
            } else {
                if fd < 0 { try openFile() }
                try POSIX.writeAll(fd, bytes, path: fileName ?? "")
            }
        } catch {
            fail()
            throw error as? StoreError ?? StoreError(.ioFailure, "could not write the body of \(key)", cause: error)
        }
        crc.update(bytes)
        size += bytes.count
    }

    /// Stores the entry: closes the body file and records it in the index, replacing an
    /// earlier entry with the same key and variant. Returns `nil` when the body was abandoned
    /// for its size. Blocks the thread until the index has it; see ``commitWithoutBlocking()``.
    @discardableResult
    public func commit() throws -> CacheEntry? {
        guard let body = try finishBody() else { return nil }
        return try recorded { try store.insert(entry, key: key, varyKey: varyKey, body: body, size: size) }
    }

    /// ``commit()`` that suspends rather than blocks while the index writes the entry (with the
    /// others stored at the same time, in one transaction): for a caller on an event loop or
    /// Swift's cooperative pool. (A name of its own, so that `commit()` in async code keeps
    /// meaning the blocking one.)
    @discardableResult
    public func commitWithoutBlocking() async throws -> CacheEntry? {
        guard let body = try finishBody() else { return nil }
        let stored: Result<CacheEntry, any Error>
        do {
            stored = .success(try await store.insert(entry, key: key, varyKey: varyKey, body: body, size: size))
        } catch {
            stored = .failure(error)
        }
        return try recorded { try stored.get() }
    }

    /// Stores the entry without waiting for the index: the row joins the next transaction and
    /// `whenWritten` runs on the index writer's queue once it is in, or with the error that kept
    /// it out (then the body file is deleted). Returns `false` when the body was abandoned for
    /// its size (nothing is stored and `whenWritten` never runs).
    ///
    /// Throws a ``StoreError`` with code `.indexBehind`, and drops the body, when as many entries
    /// as ``CacheStore/Configuration/maximumEntriesOnTheirWay`` are already on their way (a slow
    /// or stuck disk): the rows waiting for it stay bounded.
    public func commitWithoutWaiting(
        whenWritten: @escaping @Sendable (Result<CacheEntry, any Error>) -> Void = { _ in }
    ) throws -> Bool {
        if !closed && !isAbandoned {
            do {
                try store.checkRoomOnTheWay(for: key)
            } catch {
                cancel()
                throw error
            }
        }
        guard let body = try finishBody() else { return false }
        // The file now belongs to the row on its way in; a failure deletes it there.
        fileName = nil
        let files = store.files
        store.insertWithoutWaiting(entry, key: key, varyKey: varyKey, body: body, size: size) { result in
            if case .failure = result, case .file(let name, _) = body { POSIX.unlinkIfPresent(files.path(name)) }
            whenWritten(result)
        }
        return true
    }

    /// Stores the entry with `response` as its head instead of the one it was made with (a body
    /// cut short is kept as the part that arrived); otherwise as ``commit()``.
    @discardableResult
    public func commit(withHead response: HTTPResponse) throws -> CacheEntry? {
        entry.stored.response = response
        return try commit()
    }

    /// Closes the writer and its body file: where the body is, or `nil` when it was abandoned
    /// for its size.
    private func finishBody() throws -> BodyLocation? {
        guard !closed else { throw StoreError(.closed, "the body writer for \(key) is already closed") }
        closed = true
        if isAbandoned { return nil }
        guard let name = fileName else { return .data(buffer) }
        do {
            try SpareBodyFiles.fit(fd, to: size, holding: max(heldBySpareFile, reserved))
        } catch {
            discardFile()
            throw error
        }
        POSIX.closeFile(fd)
        fd = -1
        return .file(name: name, checksum: crc.value)
    }

    /// The entry `insert` recorded; the body file then belongs to the index. When it fails, the
    /// file is deleted.
    private func recorded(_ insert: () throws -> CacheEntry) throws -> CacheEntry {
        do {
            let stored = try insert()
            fileName = nil
            return stored
        } catch {
            discardFile()
            throw error
        }
    }

    /// The bytes written so far and from now on, readable apart from this writer (see
    /// ``WrittenBody``); `nil` while the body is still buffered in memory (no file yet, up to
    /// ``CacheStore/Configuration/inlineBodyLimit``), or once the writer is closed or has
    /// dropped its file. Bytes written after ``isAbandoned`` turns true are not in it.
    public func writtenBody() -> WrittenBody? {
        // A descriptor of its own, for the same open file: no second path walk, and reading
        // at explicit offsets leaves the writer's position alone.
        guard !closed, !isAbandoned, fd >= 0, let fileName, let reading = try? POSIX.duplicate(fd) else { return nil }
        return WrittenBody(descriptor: reading, name: fileName)
    }

    /// Drops the body; nothing is stored.
    public func cancel() {
        closed = true
        discardFile()
    }

    private func openFile() throws {
        let name: String
        if let spare = store.spares.take(in: store.files) {
            (name, fd, heldBySpareFile) = spare
        } else {
            name = store.files.newName(key: key, varyKey: varyKey)
            fd = try POSIX.createExclusive(store.files.path(name)) {
                try self.store.files.prepareDirectories(for: name)
            }
        }
        // Held by this descriptor and its duplicates (writtenBody()) until the last is closed:
        // the file is not recycled while anything written through it may still be read. (The
        // wait is for a recycler that has just renamed this spare file and is letting go of it.)
        _ = POSIX.lock(fd, exclusive: false, wait: true)
        fileName = name
        if let expectedSize, expectedSize > heldBySpareFile, expectedSize <= store.configuration.maximumEntrySize,
            try POSIX.reserve(fd, bytes: expectedSize, path: name)
        {
            reserved = expectedSize
        }
        if !buffer.isEmpty {
            try buffer.withUnsafeBytes { try POSIX.writeAll(fd, $0, path: name) }
            buffer = Data()
        }
    }

    private func abandon() {
        isAbandoned = true
        store.logger.debug("not storing \(key): its body passed \(store.configuration.maximumEntrySize) bytes")
        discardFile()
        buffer = Data()
    }

    private func fail() {
        closed = true
        discardFile()
        buffer = Data()
    }

    private func discardFile() {
        if fd >= 0 {
            POSIX.closeFile(fd)
            fd = -1
        }
        if let name = fileName {
            POSIX.unlinkIfPresent(store.files.path(name))
            fileName = nil
        }
    }
}
