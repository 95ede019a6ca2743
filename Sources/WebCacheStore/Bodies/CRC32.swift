/// CRC-32 (IEEE 802.3, as in zlib and PNG), slicing-by-8. Used to detect bodies that do not match
/// their index row after a crash or a stray write.
struct CRC32: Sendable {
    private(set) var value: UInt32 = 0
    private var state: UInt32 = 0xFFFF_FFFF

    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for index in 0..<256 {
            var crc = UInt32(index)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
            tables[0][index] = crc
        }
        for index in 0..<256 {
            for slice in 1..<8 {
                let previous = tables[slice - 1][index]
                tables[slice][index] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    private static let flat: [UInt32] = tables.flatMap { $0 }

    mutating func update(_ buffer: UnsafeRawBufferPointer) {
        var crc = state
        var index = 0
        let count = buffer.count
        Self.flat.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let low = UInt32(buffer[index]) | UInt32(buffer[index + 1]) << 8
                    | UInt32(buffer[index + 2]) << 16 | UInt32(buffer[index + 3]) << 24
                let high = UInt32(buffer[index + 4]) | UInt32(buffer[index + 5]) << 8
                    | UInt32(buffer[index + 6]) << 16 | UInt32(buffer[index + 7]) << 24
                let one = crc ^ low
                crc = table[7 * 256 + Int(one & 0xFF)] ^ table[6 * 256 + Int((one >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((one >> 16) & 0xFF)] ^ table[4 * 256 + Int(one >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(buffer[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        state = crc
        value = ~crc
    }

    static func checksum(_ buffer: UnsafeRawBufferPointer) -> UInt32 {
        var crc = CRC32()
        crc.update(buffer)
        return crc.value
    }
}
