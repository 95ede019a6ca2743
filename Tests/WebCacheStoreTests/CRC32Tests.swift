import Foundation
import Testing

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
        let data = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
        var crc = CRC32()
        var start = 0
        while start < data.count {
            let end = min(data.count, start + size)
            data[start..<end].withUnsafeBytes { crc.update($0) }
            start = end
        }
        #expect(crc.value == data.withUnsafeBytes(CRC32.checksum))
    }
}
