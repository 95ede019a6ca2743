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

    /// How many bits ``crc32(_:)`` folds per multiplication here: 512 (AVX-512 with VPCLMULQDQ,
    /// for 256 bytes and more), 128 (PCLMULQDQ), or 0 (zlib's tables).
    package static var foldingWidth: Int { Int(webcache_crc32_folding_width()) }
}
