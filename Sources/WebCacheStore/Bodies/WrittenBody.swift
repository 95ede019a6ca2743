#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bytes a ``BodyWriter`` has written so far, readable while it goes on writing and after it
/// is done — committed, cancelled or dropped: it holds the file open, so renaming or deleting the
/// file does not take the bytes away. Made by ``BodyWriter/writtenBody()``; for a caller that
/// would otherwise keep a body in memory only to read it again (a slow reader of a body still
/// arriving).
public final class WrittenBody: Sendable {
    let descriptor: Int32
    private let name: String

    init(descriptor: Int32, name: String) {
        self.descriptor = descriptor
        self.name = name
    }

    deinit {
        POSIX.closeFile(descriptor)
    }

    /// `count` bytes from `offset` (offsets as ``BodyWriter/size`` counted them); throws a
    /// ``StoreError`` when they cannot be read (they were never written, or an I/O error).
    public func read(offset: Int, count: Int) throws -> Data {
        let data = try POSIX.readAt(descriptor, offset: offset, count: count)
        guard data.count == count else {
            throw StoreError(.ioFailure, "\(name): \(count) bytes at \(offset) were not written")
        }
        return data
    }
}
