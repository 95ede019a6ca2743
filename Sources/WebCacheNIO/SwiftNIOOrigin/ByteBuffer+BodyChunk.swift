import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension ByteBuffer {
    /// Body bytes from the origin as `Data`, for the engine. A large chunk that fills most of its
    /// storage (a socket read of a big body: up to 64 KB each) is referenced where it lies, the
    /// storage kept alive until the `Data` goes, instead of being copied; a small one, or one that
    /// would keep a mostly unused storage alive, is copied. Nothing writes into a storage that is
    /// referenced this way: SwiftNIO copies a storage on write once it is not uniquely held.
    /// A referenced chunk can be turned back into this buffer while it lives
    /// (``ChunkBuffers/buffer(of:)``), so that sending it on costs no copy either.
    func bodyChunk() -> Data {
        let count = readableBytes
        guard count >= Self.referencedChunkMinimum, count * 2 >= storageCapacity else {
            return withUnsafeReadableBytes { Data($0) }
        }
        return withUnsafeReadableBytesWithStorageManagement { bytes, storage in
            guard let start = bytes.baseAddress else { return Data() }
            let kept = storage.retain()
            ChunkBuffers.chunkMade(of: self, at: start)
            return Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: start), count: bytes.count,
                deallocator: .custom { _, _ in
                    ChunkBuffers.chunkReleased(at: start)
                    kept.release()
                })
        }
    }

    /// The smallest chunk referenced rather than copied: below it, the copy costs less than the
    /// allocations that keep the storage alive.
    static let referencedChunkMinimum = 16 << 10
}
