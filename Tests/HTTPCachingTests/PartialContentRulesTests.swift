import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Parts of a representation: Content-Range, storing, combining and reuse (RFC 9110 §14.4, RFC 9111 §3.3, §3.4)")
struct PartialContentRulesTests {
    @Test(
        "Content-Range parsing",
        arguments: [
            ("bytes 0-4/10", ContentRange(range: 0..<5, completeLength: 10)),
            ("bytes 5-9/*", ContentRange(range: 5..<10, completeLength: nil)),
            (" bytes 9-9/10 ", ContentRange(range: 9..<10, completeLength: 10)),
            ("bytes 0-0/1", ContentRange(range: 0..<1, completeLength: 1)),
        ])
    func parsing(value: String, expected: ContentRange) {
        #expect(ContentRange(value) == expected)
    }

    @Test(
        "malformed Content-Range values are refused",
        arguments: [
            "", "bytes */10", "bytes 5-4/10", "bytes 0-10/10", "bytes 0-4", "items 0-4/10", "bytes -1-4/10",
            "bytes 0-4/ten",
            "bytes 0-99999999999999999999/*", "bytes 0-4/99999999999999999999", "bytes 0 - 4/10", "bytes 0-4/10/10",
        ])
    func malformed(value: String) {
        #expect(ContentRange(value) == nil)
    }

    static let rules = CacheRules.shared

    static func part(_ range: String, _ fields: [String] = ["ETag: \"v1\""], status: Int = 206) -> HTTPResponse {
        Fixtures.response(status, ["Cache-Control: max-age=600", "Content-Range: \(range)"] + fields)
    }

    @Test("a 206 is stored only as one range of a known length, answering a GET with Range")
    func storable() {
        let ranged = Fixtures.request(.get, "https://example.com/v", ["Range: bytes=0-4"])
        #expect(Self.rules.storability(of: Self.part("bytes 0-4/10"), for: ranged).isStorable)
        #expect(!Self.rules.storability(of: Self.part("bytes 0-4/*"), for: ranged).isStorable, "unknown length")
        #expect(
            !Self.rules.storability(of: Self.part("bytes 0-4/10"), for: Fixtures.request()).isStorable,
            "no Range asked for")
        let multipart = Fixtures.response(
            206, ["Cache-Control: max-age=600", "Content-Type: multipart/byteranges; boundary=x"])
        #expect(!Self.rules.storability(of: multipart, for: ranged).isStorable)
        #expect(
            Self.rules.storablePart(of: Self.part("bytes 0-4/10", ["Content-Length: 6"])) == nil,
            "a length that disagrees")
        #expect(
            Self.rules.storablePart(of: Self.part("bytes 4-9/10", ["Content-Length: 6"]))
                == ContentRange("bytes 4-9/10"))
    }

    @Test("parts combine only with the same strong ETag and complete length")
    func combining() {
        let rules = Self.rules
        #expect(rules.partsCombine(stored: Self.part("bytes 0-4/10"), new: Self.part("bytes 5-9/10")))
        #expect(
            !rules.partsCombine(stored: Self.part("bytes 0-4/10"), new: Self.part("bytes 5-9/11")), "lengths differ")
        #expect(
            !rules.partsCombine(stored: Self.part("bytes 0-4/10"), new: Self.part("bytes 5-9/10", ["ETag: \"v2\""])))
        #expect(
            !rules.partsCombine(
                stored: Self.part("bytes 0-4/10", ["ETag: W/\"v1\""]),
                new: Self.part("bytes 5-9/10", ["ETag: W/\"v1\""])),
            "weak tags never combine")
        #expect(
            !rules.partsCombine(stored: Self.part("bytes 0-4/10", []), new: Self.part("bytes 5-9/10", [])),
            "no validator, no combining")
        let complete = Fixtures.response(200, ["ETag: \"v1\"", "Content-Length: 10"])
        #expect(rules.partsCombine(stored: complete, new: Self.part("bytes 5-9/10")))
    }

    @Test(
        "a stored part answers the ranges that lie within it",
        arguments: [
            ("bytes=2-3", [2..<4] as [Range<Int>]?),
            ("bytes=0-4", [0..<5]),
            ("bytes=0-", nil),  // runs past the part's end
            ("bytes=-5", nil),  // the last five bytes of ten
            ("bytes=0-1,3-4", [0..<2, 3..<5]),
            ("bytes=4-5", nil),
            ("bytes=10-", nil),  // unsatisfiable: the origin answers it
        ])
    func within(range: String, expected: [Range<Int>]?) {
        let stored = StoredResponse(
            request: Fixtures.request(), response: Self.part("bytes 0-4/10"), requestTime: Fixtures.epoch,
            responseTime: Fixtures.epoch)
        let request = Fixtures.request(.get, "https://example.com/resource", ["Range: \(range)"])
        #expect(Self.rules.rangesWithin(ContentRange("bytes 0-4/10")!, for: request, stored: stored) == expected)
    }

    @Test("a part's head: its Content-Range and Content-Length, or a 200 once it is the whole")
    func heads() {
        let head = Self.part("bytes 5-9/10", ["ETag: \"v1\"", "Content-Length: 5"])
        let combined = Self.rules.headForPart(head, part: ContentRange(range: 3..<10, completeLength: 10))
        #expect(
            combined.status.code == 206 && combined.headerFields[.contentRange] == "bytes 3-9/10"
                && combined.headerFields[.contentLength] == "7")
        let whole = Self.rules.headForPart(head, part: ContentRange(range: 0..<10, completeLength: 10))
        #expect(
            whole.status.code == 200 && whole.headerFields[.contentRange] == nil
                && whole.headerFields[.contentLength] == "10")
        #expect(whole.headerFields[.eTag] == "\"v1\"")
    }
}
