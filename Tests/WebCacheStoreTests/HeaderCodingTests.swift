import HTTPTypes
import Testing

@testable import WebCacheStore

/// The text form of header fields in the index, read back on every disk hit.
@Suite("Header coding")
struct HeaderCodingTests {
    @Test("fields come back as written: order, repeated names, empty values, colons in values")
    func roundTrip() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: .cacheControl, value: "max-age=60"))
        fields.append(HTTPField(name: .setCookie, value: "a=1"))
        fields.append(HTTPField(name: .setCookie, value: "b=2"))
        fields.append(HTTPField(name: try #require(HTTPField.Name("X-Empty")), value: ""))
        fields.append(HTTPField(name: .location, value: "https://example.com:8443/a?b=c:d"))
        let text = HeaderCoding.encode(fields)
        #expect(
            text
                == "Cache-Control: max-age=60\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-Empty: \r\nLocation: https://example.com:8443/a?b=c:d"
        )
        #expect(HeaderCoding.decode(text) == fields)
        #expect(HeaderCoding.decode("") == HTTPFields())
    }

    @Test(
        "text not in the stored form reads as nil, never a trap",
        arguments: [
            "no colon here", "Name: value\r", "Name: value\rOther: x", "Name: value\r\n", "Bad Name: x", ": no name",
        ])
    func malformed(_ text: String) {
        #expect(HeaderCoding.decode(text) == nil)
    }

    @Test("more fields than HTTPFields can hold (a damaged row) read as nil, never a trap")
    func tooMany() {
        let text = Array(repeating: "X-A: 1", count: 70_000).joined(separator: "\r\n")
        #expect(HeaderCoding.decode(text) == nil)
        let many = Array(repeating: "X-A: 1", count: 1_000).joined(separator: "\r\n")
        #expect(HeaderCoding.decode(many)?.count == 1_000)
    }
}
