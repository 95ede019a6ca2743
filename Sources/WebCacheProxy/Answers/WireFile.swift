import CUnnamedFiles
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// A whole answer, head and body, in one unnamed file: replaying it is a single `sendfile`, with
/// no separate write for the head (a segment, and a wake-up of the client, of its own) and no
/// opening of the entry's body file.
///
/// The file is created without a name next to the store's bodies (Linux `O_TMPFILE`: it is
/// gone once closed, even after a crash, and its pages are the file system's, which sends them
/// in large folios), or, where the file system cannot, as a sealed file in memory (`memfd`).
/// Nothing writes to it once made, so its pages never change while the kernel may still be
/// sending them; it is closed when its last holder (a kept answer, a write in flight) lets go.
final class WireFile: Sendable {
    private let descriptor: CInt
    /// Head and body together, in bytes.
    let size: Int

    private init(descriptor: CInt, size: Int) {
        self.descriptor = descriptor
        self.size = size
    }

    deinit {
        #if os(Linux)
        _ = close(descriptor)
        #endif
    }

    /// A handle of its own for one write: SwiftNIO lets one thread at a time use a handle, and
    /// answers go out on several event loops at once. Give it back with ``release(_:)`` once
    /// written; the file stays open while this wire file lives.
    func borrowHandle() -> NIOFileHandle {
        NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: descriptor)
    }

    /// Ends a handle from ``borrowHandle()`` without closing the file.
    func release(_ handle: NIOFileHandle) {
        _ = try? handle.takeDescriptorOwnership()
    }

    /// A wire file holding `head` followed by the first `bodySize` bytes of `body` (read at
    /// explicit offsets: a write of `body` in flight is not disturbed), made in `directory` or
    /// else in memory; `nil` where the platform has neither or the copy comes up short.
    static func make(head: ByteBuffer, body: CInt, bodySize: Int, directory: String) -> WireFile? {
        #if os(Linux)
        var sealed = false
        var descriptor = webcache_unnamed_file_create(directory)
        if descriptor < 0 {
            descriptor = webcache_memory_file_create("webcache-answer")
            sealed = true
        }
        guard descriptor >= 0 else { return nil }
        let wireFile = WireFile(descriptor: descriptor, size: head.readableBytes + bodySize)
        let copied =
            head.withUnsafeReadableBytes { writeAll($0, to: descriptor) }
            && copy(bodySize, from: body, to: descriptor)
            && (!sealed || webcache_memory_file_seal(descriptor) == 0)
        return copied ? wireFile : nil
        #else
        return nil
        #endif
    }

    #if os(Linux)
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: CInt) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    /// Copies in the kernel (`sendfile` between files), from offset 0 of `source`.
    private static func copy(_ count: Int, from source: CInt, to destination: CInt) -> Bool {
        var offset = off_t(0)
        while offset < count {
            let copied = sendfile(destination, source, &offset, count - Int(offset))
            if copied < 0 && errno == EINTR { continue }
            guard copied > 0 else { return false }
        }
        return true
    }
    #endif
}
