import CChecksum

/// The store's body checksum, for benchmarks that compare it with zlib's.
package enum BodyChecksum {
    /// The CRC-32 the store computes (``CRC32``).
    package static func crc32(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        CRC32.checksum(buffer)
    }

    /// The same CRC-32 by zlib alone.
    package static func crc32ByZlib(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        return webcache_crc32_zlib(0, base, buffer.count)
    }

    /// Whether ``crc32(_:)`` folds with carry-less multiplication on this processor.
    package static var isFolding: Bool { webcache_crc32_is_folding() != 0 }
}
