import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Reading one field's value")
struct FieldValueTests {
    @Test(
        "value(_:) is what the subscript gives: none, one, several joined, Cookie joined with semicolons, any case",
        arguments: [
            (["Content-Type: text/html"], "Content-Length"),
            (["Content-Length: 12", "ETag: \"a\""], "Content-Length"),
            (["content-length: 12"], "Content-Length"),
            (["Via: 1.1 a", "X: 1", "Via: 1.0 b"], "Via"),
            (["Cache-Control: max-age=1", "Cache-Control: public", "Cache-Control: s-maxage=2"], "Cache-Control"),
            (["Cookie: a=1", "Cookie: b=2"], "Cookie"),
            (["X-Empty: "], "X-Empty"),
            ([], "Date"),
        ])
    func sameAsSubscript(lines: [String], name: String) throws {
        let fields = Fixtures.fields(lines)
        let field = try #require(HTTPField.Name(name))
        #expect(fields.value(field) == fields[field])
    }

    @Test("several fields of a name come back joined in order; one comes back as it is")
    func joinedInOrder() {
        let fields = Fixtures.fields(["Via: 1.1 a", "Content-Length: 3", "Via: 1.0 b", "Cookie: a=1", "Cookie: b=2"])
        #expect(fields.value(.via) == "1.1 a, 1.0 b")
        #expect(fields.value(.cookie) == "a=1; b=2")
        #expect(fields.value(.contentLength) == "3")
        #expect(fields.value(.eTag) == nil)
    }
}
