import HTTPCaching

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Bytes kept on disk instead of in memory for as long as a caller needs them (a body streaming
/// through that is not stored), in a file beside the store's bodies that has no name: it is
/// deleted as soon as it is made, and gone once closed. A crash between the two leaves a file
/// that the recovery sweep removes. Appended by one writer at a time; read from any thread.
public final class SpillFile: Sendable {
    /// What has been appended, readable (see ``WrittenBody``).
    public let contents: WrittenBody
    private let size = Locked(0)

    /// Makes the file at `path` (its directory must exist) and takes its name away at once.
    init(path: String) throws {
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StoreError(.ioFailure, "cannot create \(path): \(POSIX.errorText())") }
        POSIX.unlinkIfPresent(path)
        contents = WrittenBody(descriptor: descriptor, name: "a spill file")
    }

    /// Appends `data`; returns where it starts. Throws a ``StoreError`` (a full disk).
    public func append(_ data: Data) throws -> Int {
        try size.withLock { size in
            // Reads go through `pread`: the file's position moves only with these appends.
            try data.withUnsafeBytes { try POSIX.writeAll(contents.descriptor, $0, path: "a spill file") }
            defer { size += data.count }
            return size
        }
    }
}

extension CacheStore {
    /// A new ``SpillFile`` beside this store's bodies (on the same file system).
    public func makeSpillFile() throws -> SpillFile {
        let name = "\(files.namespaceDirectory)/spill/\(UInt64.random(in: 0...UInt64.max)).spill"
        try files.prepareDirectories(for: name)
        return try SpillFile(path: files.path(name))
    }
}
