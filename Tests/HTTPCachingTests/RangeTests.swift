import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Ranges: RFC 9110 §14 parsing, resolution, If-Range and multipart bodies")
struct RangeTests {
    @Test(
        "Range parsing and resolution against a 10,000-byte body (RFC 9110 §14.1.1, §14.1.2)",
        arguments: [
            ("bytes=0-99", ByteRangeRequest.Resolution.satisfiable([0..<100])),
            ("bytes=9990-", .satisfiable([9990..<10000])),
            ("bytes=-500", .satisfiable([9500..<10000])),
            ("bytes=-20000", .satisfiable([0..<10000])),
            ("bytes=0-99999999999999999999999", .satisfiable([0..<10000])),  // saturates, never overflows
            ("bytes=9999-", .satisfiable([9999..<10000])),
            ("bytes=0-0,-1", .satisfiable([0..<1, 9999..<10000])),
            ("bytes=0-99, 50-149, 150-199", .satisfiable([0..<200])),  // overlapping and adjacent merged
            ("bytes=500-599,0-9", .satisfiable([0..<10, 500..<600])),
            ("BYTES=1-2", .satisfiable([1..<3])),  // the unit is case-insensitive
            ("bytes=0-1,,", .satisfiable([0..<2])),  // empty list elements are ignored
            ("bytes=10000-", .unsatisfiable),
            ("bytes=20000-30000", .unsatisfiable),
            ("bytes=-0", .unsatisfiable),
            ("bytes=" + (0..<17).map { "\($0)-\($0)" }.joined(separator: ","), .whole),  // more than 16 ranges
        ])
    func resolution(field: String, expected: ByteRangeRequest.Resolution) throws {
        let ranges = try #require(ByteRangeRequest(field))
        #expect(ranges.resolve(length: 10_000) == expected)
    }

    @Test(
        "one range resolves without building arrays as it would with them; several, invalid or unsatisfiable give none",
        arguments: [
            ("bytes=0-99", 0..<100), ("bytes=9990-", 9990..<10000), ("bytes=-500", 9500..<10000),
            ("bytes=-20000", 0..<10000), ("bytes=0-99999999999999999999999", 0..<10000), ("BYTES=1-2", 1..<3),
            ("bytes=0-1,,", 0..<2), (" bytes= 5-9 ", 5..<10), ("bytes=0-0,-1", nil), ("bytes=0-99, 50-149", nil),
            ("bytes=10000-", nil), ("bytes=-0", nil), ("bytes=5-3", nil), ("items=0-1", nil), ("", nil),
        ] as [(String, Range<Int>?)])
    func singleRange(field: String, expected: Range<Int>?) {
        #expect(ByteRangeRequest.singleRange(field, length: 10_000) == expected)
    }

    @Test(
        "invalid Range fields are ignored (RFC 9110 §14.2)",
        arguments: [
            "", "bytes", "bytes=", "items=0-1", "bytes=5-3", "bytes=a-b", "bytes=1", "bytes=-", "bytes=+1-2",
            "bytes=1-2-3", "bytes=١-٢", "bytes 0-1", "bytes\u{1D}0-1", "bytes=,", "bytes= , ", "bytes=0 1-2",
        ])
    func invalid(field: String) {
        #expect(ByteRangeRequest(field) == nil)
    }

    static let stored = StoredResponse(
        request: Fixtures.request(.get),
        response: Fixtures.response(
            200,
            [
                "Date: @0", "Last-Modified: @-86400", "ETag: \"strong\"", "Content-Type: video/webm",
                "Cache-Control: max-age=600",
            ]),
        requestTime: Fixtures.epoch, responseTime: Fixtures.epoch)

    @Test(
        "If-Range: a strong ETag or the exact strong Last-Modified keeps the range; anything else sends the whole (RFC 9110 §13.1.5)",
        arguments: [
            ("\"strong\"", true), ("W/\"strong\"", false), ("\"other\"", false), ("@-86400", true), ("@-86399", false),
            ("not a date", false),
        ])
    func ifRange(condition: String, keepsRange: Bool) {
        let request = Fixtures.request(
            .get, "https://example.com/resource", ["Range: bytes=0-9", "If-Range: \(condition)"])
        let answer = CacheRules.shared.rangeAnswer(to: request, stored: Self.stored, length: 100)
        #expect(answer == (keepsRange ? .partial([0..<10]) : .whole))
    }

    @Test("ranges apply to GET of a stored 200 only")
    func applicability() {
        let head = Fixtures.request(.head, "https://example.com/resource", ["Range: bytes=0-9"])
        #expect(CacheRules.shared.rangeAnswer(to: head, stored: Self.stored, length: 100) == .whole)
        var notFound = Self.stored
        notFound.response.status = .notFound
        let get = Fixtures.request(.get, "https://example.com/resource", ["Range: bytes=0-9"])
        #expect(CacheRules.shared.rangeAnswer(to: get, stored: notFound, length: 100) == .whole)
        let twoFields = Fixtures.request(
            .get, "https://example.com/resource", ["Range: bytes=0-9", "Range: bytes=10-19"])
        #expect(CacheRules.shared.rangeAnswer(to: twoFields, stored: Self.stored, length: 100) == .whole)
    }

    @Test("a multipart/byteranges body, byte for byte (RFC 9110 §14.6)")
    func multipart() {
        let body = CacheRules.shared.multipartBody(
            parts: [(0..<3, Data("abc".utf8)), (7..<10, Data("hij".utf8))], contentType: "text/plain", length: 10,
            boundary: "B")
        #expect(
            String(decoding: body, as: UTF8.self) == """
                \r\n--B\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-2/10\r\n\r\nabc\
                \r\n--B\r\nContent-Type: text/plain\r\nContent-Range: bytes 7-9/10\r\n\r\nhij\
                \r\n--B--\r\n
                """)
        let head = CacheRules.shared.partialHead(
            Self.stored.response, ranges: [0..<3, 7..<10], length: 10, boundary: "B", bodyLength: body.count)
        #expect(head.status.code == 206)
        #expect(head.headerFields[.contentType] == "multipart/byteranges; boundary=B")
        #expect(head.headerFields[.contentRange] == nil)
        #expect(head.headerFields[.contentLength] == String(body.count))
        let unsatisfiable = CacheRules.shared.unsatisfiableRangeHead(Self.stored.response, length: 10)
        #expect(unsatisfiable.status.code == 416 && unsatisfiable.headerFields[.contentRange] == "bytes */10")
    }
}
