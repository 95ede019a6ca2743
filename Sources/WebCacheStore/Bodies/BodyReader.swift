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

/// Reads a stored body in chunks, so that a body of any size needs only one chunk of memory.
///
/// The body file's length is checked when it is opened; a body not yet verified in this process
/// is checksummed in a first pass before any byte is handed out, so a corrupt body is never
/// served.
public final class BodyReader {
    private var pending: Data?
    private var fd: Int32 = -1
    private let chunkSize: Int
    private var remaining: Int

    init(data: Data) {
        pending = data
        chunkSize = data.count
        remaining = 0
    }

    init(fd: Int32, size: Int, chunkSize: Int) {
        self.fd = fd
        self.remaining = size
        self.chunkSize = max(1, chunkSize)
    }

    deinit {
        if fd >= 0 { POSIX.closeFile(fd) }
    }

    /// The next chunk, or `nil` at the end.
    public func next() throws -> Data? {
        if let data = pending {
            pending = nil
            return data.isEmpty ? nil : data
        }
        guard fd >= 0, remaining > 0 else { return nil }
        var chunk = Data(count: min(chunkSize, remaining))
        let read = try chunk.withUnsafeMutableBytes { try POSIX.readChunk(fd, into: $0) }
        guard read > 0 else { throw StoreError(.corruptBody, "a stored body ended \(remaining) bytes early") }
        remaining -= read
        if read < chunk.count { chunk.removeSubrange(read...) }
        return chunk
    }
}

extension CacheStore {
    /// Opens `entry`'s body for reading in chunks of `chunkSize` bytes.
    public func openBody(_ entry: CacheEntry, chunkSize: Int = 64 << 10) throws -> BodyReader {
        guard case .file(let name, let checksum) = entry.body else {
            return BodyReader(data: try readBody(entry))  // in memory: no need for the file
        }
        do {
            let (fd, size) = try POSIX.openBodyForReading(files.path(name))
            do {
                guard size == entry.bodySize else {
                    throw StoreError(.corruptBody, "body \(name) has \(size) bytes, the index says \(entry.bodySize)")
                }
                if !verifiedBodies.withLock({ $0.contains(entry.id) }) {
                    try verifyChecksum(fd: fd, size: size, expected: checksum, name: name)
                    verifiedBodies.withLock { _ = $0.insert(entry.id) }
                }
                return BodyReader(fd: fd, size: size, chunkSize: chunkSize)
            } catch {
                POSIX.closeFile(fd)
                throw error
            }
        } catch let error as StoreError {
            discardBroken(entry, because: error)
            throw StoreError(.corruptBody, "the stored body of \(entry.key) is unusable and was removed", cause: error)
        }
    }

    private func verifyChecksum(fd: Int32, size: Int, expected: UInt32, name: String) throws {
        var crc = CRC32()
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var total = 0
        try buffer.withUnsafeMutableBytes { raw in
            while true {
                let read = try POSIX.readChunk(fd, into: raw)
                if read == 0 { break }
                crc.update(UnsafeRawBufferPointer(rebasing: raw[..<read]))
                total += read
            }
        }
        guard total == size, crc.value == expected else {
            throw StoreError(.corruptBody, "body \(name) does not match its checksum")
        }
        guard lseek(fd, 0, SEEK_SET) == 0 else {
            throw StoreError(.ioFailure, "cannot rewind body \(name): \(POSIX.errorText())")
        }
    }
}
