import NIOConcurrencyHelpers
import NIOCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The buffers behind the body chunks that reach the engine without a copy
/// (``NIOCore/ByteBuffer/bodyChunk()``), found again by their bytes: a front door on SwiftNIO that
/// sends such a chunk to its client writes the origin's buffer itself rather than copying the
/// chunk into a new one (the proxy's streamed answers: a user-space copy of every large body,
/// 2 % of a 128 KB miss and 5 % of a 1 MB one).
///
/// The engine's chunks are `Data`, so the buffer cannot travel with them; this table, keyed by
/// the address of the bytes, brings it back. An entry lives exactly as long as a chunk made by
/// `bodyChunk()` for those bytes: the chunk's deallocator removes it (while the chunk's own
/// reference still keeps the storage, so an address is never found after its bytes are freed).
/// A chunk the engine sliced, joined or copied does not match an entry (address and length
/// must both agree) and is copied as before.
package enum ChunkBuffers {
    /// A buffer, and how many live chunks reference its bytes (the same bytes may be made into
    /// a chunk twice).
    private struct Entry {
        var buffer: ByteBuffer
        var chunks: Int
    }

    private static let entries = NIOLockedValueBox([UInt: Entry]())

    /// Notes that a chunk references `buffer`'s readable bytes, at `address`.
    static func chunkMade(of buffer: ByteBuffer, at address: UnsafeRawPointer) {
        entries.withLockedValue { entries in
            entries[UInt(bitPattern: address), default: Entry(buffer: buffer, chunks: 0)].chunks += 1
        }
    }

    /// The chunk referencing the bytes at `address` is gone.
    static func chunkReleased(at address: UnsafeRawPointer) {
        // The buffer is let go outside the lock: it may be the storage's last reference.
        _ = entries.withLockedValue { entries -> Entry? in
            let key = UInt(bitPattern: address)
            guard var entry = entries[key] else { return nil }
            entry.chunks -= 1
            guard entry.chunks == 0 else {
                entries[key] = entry
                return nil
            }
            return entries.removeValue(forKey: key)
        }
    }

    /// The buffers behind `chunks`, one for each (`nil` for a chunk that is not an origin's
    /// buffer, ``buffer(of:)``); `nil` when none is. Chunks too small to have been referenced
    /// (a small body's) are never looked up, so they cost no lock and no array.
    package static func buffers(of chunks: [Data]) -> [ByteBuffer?]? {
        guard chunks.contains(where: { $0.count >= ByteBuffer.referencedChunkMinimum }) else { return nil }
        let buffers = chunks.map { buffer(of: $0) }
        return buffers.contains { $0 != nil } ? buffers : nil
    }

    /// The buffer whose readable bytes `chunk` is, when `chunk` is one that
    /// ``NIOCore/ByteBuffer/bodyChunk()`` made without a copy and it is whole; `nil` otherwise.
    package static func buffer(of chunk: Data) -> ByteBuffer? {
        guard chunk.count >= ByteBuffer.referencedChunkMinimum else { return nil }
        return chunk.withUnsafeBytes { bytes -> ByteBuffer? in
            guard let address = bytes.baseAddress else { return nil }
            let buffer = entries.withLockedValue { $0[UInt(bitPattern: address)]?.buffer }
            guard let buffer, buffer.readableBytes == bytes.count else { return nil }
            return buffer
        }
    }
}
