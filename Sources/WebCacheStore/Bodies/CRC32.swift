import CChecksum

/// CRC-32 (IEEE 802.3, as in zlib and PNG). Used to detect bodies that do not match their
/// index row after a crash or a stray write.
///
/// Computed by folding with carry-less multiplication where the processor has it (x86-64: 64
/// bytes per instruction with AVX-512 and VPCLMULQDQ, else 16), else by zlib: the same values
/// either way. For 1 MB zlib took 244 µs here, folding 16 bytes at a time 72 and 64 at a time 18
/// (`webcache-bench`, "body checksum", measures ours beside zlib's); every stored body pays it,
/// and every body file on its first read.
struct CRC32: Sendable {
    private(set) var value: UInt32 = 0

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        value = webcache_crc32(value, base, buffer.count)
    }

    static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32()
        crc.update(buffer)
        return crc.value
    }
}
