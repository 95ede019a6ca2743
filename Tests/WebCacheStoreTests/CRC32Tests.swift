import Foundation
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

@Suite("CRC-32 of stored bodies")
struct CRC32Tests {
    @Test("the standard check values (IEEE 802.3, as zlib and PNG)")
    func checkValues() {
        #expect(Data().withUnsafeBytes(CRC32.checksum) == 0)
        #expect(Data("123456789".utf8).withUnsafeBytes(CRC32.checksum) == 0xCBF4_3926)
        #expect(Data("The quick brown fox jumps over the lazy dog".utf8).withUnsafeBytes(CRC32.checksum) == 0x414F_A339)
    }

    @Test("updating piece by piece gives the checksum of the whole", arguments: [1, 7, 4096, 65_537])
    func pieces(size: Int) {
        let data = Fixtures.bytes(200_000) { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        var crc = CRC32()
        var start = 0
        while start < data.count {
            let end = min(data.count, start + size)
            data[start..<end].withUnsafeBytes { crc.update($0) }
            start = end
        }
        #expect(crc.value == data.withUnsafeBytes(CRC32.checksum))
    }

    @Test("the same values as zlib's tables: every length to 700 at every alignment, long bodies, chained updates")
    func sameAsZlib() {
        var generator = SystemRandomNumberGenerator()
        var data = [UInt8](repeating: 0, count: (1 << 20) + 77)
        var word: UInt64 = 0
        for index in data.indices {
            if index % 8 == 0 { word = generator.next() }
            data[index] = UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8)))
        }
        // Disagreements are gathered and checked once: eleven thousand expectations cost seconds.
        var disagreements: [String] = []
        data.withUnsafeBytes { bytes in
            for offset in 0..<16 {
                // Past 256 and 512: the wide path's first round, its second, and the tails after.
                for length in 0...700 {
                    let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
                    if BodyChecksum.crc32(slice) != BodyChecksum.crc32ByZlib(slice) {
                        disagreements.append("length \(length) at \(offset)")
                    }
                }
            }
            for length in [4096, 4096 + 64 + 16 + 5, 65_536 + 13, 1 << 20, (1 << 20) + 77] {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[0..<length])
                if BodyChecksum.crc32(slice) != BodyChecksum.crc32ByZlib(slice) {
                    disagreements.append("length \(length)")
                }
            }
            var crc = CRC32()
            var start = 0
            while start < bytes.count {
                let end = min(bytes.count, start + Int.random(in: 1...9000, using: &generator))
                crc.update(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
            }
            if crc.value != BodyChecksum.crc32ByZlib(bytes) { disagreements.append("chained updates") }
        }
        #expect(disagreements.isEmpty)
    }

    #if arch(x86_64) && os(Linux)
    @Test("folding is used where the processor has carry-less multiplication, 512 bits wide with AVX-512")
    func foldsWhereItCan() throws {
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = Set(cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ") ?? [])
        #expect(BodyChecksum.isFolding == (flags.contains("pclmulqdq") && flags.contains("sse4_1")))
        let wide = BodyChecksum.isFolding && flags.contains("avx512f") && flags.contains("vpclmulqdq")
        #expect(BodyChecksum.foldingWidth == (wide ? 512 : BodyChecksum.isFolding ? 128 : 0))
    }
    #endif
}
