import NIOCore
import Testing

@testable import WebCacheProxy

@Suite("Writing response heads: numbers and the end of a range's head")
struct ResponseHeadWritingTests {
    @Test(
        "numbers are written as String(value) writes them",
        arguments: [0, 1, 9, 10, 99, 100, 65_535, 1_048_576, 1_234_567_890, Int.max, -1, Int.min])
    func decimal(value: Int) {
        var buffer = ByteBuffer(string: "x")
        buffer.writeDecimal(value)
        #expect(buffer.readString(length: buffer.readableBytes) == "x" + String(value))
    }

    @Test("a range's head ends with its Content-Range, Content-Length and Connection")
    func rangeHeadEnd() {
        var buffer = ByteBuffer()
        buffer.writeRangeHeadEnd(range: 100_000..<165_536, completeLength: 8_388_608, persistence: .close)
        #expect(
            buffer.readString(length: buffer.readableBytes)
                == "Content-Range: bytes 100000-165535/8388608\r\nContent-Length: 65536\r\nConnection: close\r\n\r\n")
        var last = ByteBuffer()
        last.writeRangeHeadEnd(range: 9..<10, completeLength: 10, persistence: .keepAlive)
        #expect(
            last.readString(length: last.readableBytes) == "Content-Range: bytes 9-9/10\r\nContent-Length: 1\r\n\r\n")
    }

    @Test(
        "a range's head end is written as the fields would be, one by one, for every persistence and any numbers",
        arguments: [
            (0..<1, 1), (0..<65_536, 8_388_608), (8_323_072..<8_388_608, 8_388_608),
            ((Int.max - 10)..<(Int.max - 1), Int.max - 1), (5..<5, 10), (5..<20, 10),
        ] as [(Range<Int>, Int)])
    func rangeHeadEndAgainstFields(range: Range<Int>, length: Int) {
        for persistence in [ConnectionPersistence.close, .keepAlive, .keepAliveAnnounced] {
            var written = ByteBuffer(string: "HTTP/1.1 206 Partial Content\r\n")
            written.writeRangeHeadEnd(range: range, completeLength: length, persistence: persistence)
            var expected = ByteBuffer(string: "HTTP/1.1 206 Partial Content\r\n")
            expected.writeResponseHeadEnd(
                contentRange: "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(length)",
                framing: .length(range.count), persistence: persistence)
            #expect(written == expected, "\(range) of \(length), \(persistence)")
        }
    }
}
