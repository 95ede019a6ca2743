import NIOCore
import Testing

@testable import HTTPWire

@Suite("The response parser of the origin leg (RFC 9112)")
struct ResponseParserTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        var rule: String
        var bytes: String
        var toHEAD = false
        /// Whether the origin closes the connection after the bytes.
        var closed = false
        var responses: [String]
        var interim: [Int] = []

        var testDescription: String { rule }
    }

    static let accepted: [Accepted] = [
        Accepted(
            rule: "a body of Content-Length bytes, then the next response on the connection (§6.3)",
            bytes:
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"a\"\r\n\r\nhelloHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
            responses: [
                "HTTP/1.1 200 [\"Content-Length: 5\", \"ETag: \\\"a\\\"\"] body 5 ended true",
                "HTTP/1.1 404 [\"Content-Length: 0\"] body 0 ended true",
            ]),
        Accepted(
            rule: "a chunked body with extensions and trailers (§7.1)",
            bytes:
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\n0\r\nServer-Timing: x\r\n\r\n",
            responses: ["HTTP/1.1 200 [\"Transfer-Encoding: chunked\"] body 5 ended true"]),
        Accepted(
            rule: "no body after 204 and 304, whatever Content-Length says (§6.3)",
            bytes: "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
            responses: [
                "HTTP/1.1 204 [] body 0 ended true", "HTTP/1.1 304 [\"Content-Length: 10\"] body 0 ended true",
            ]),
        Accepted(
            rule: "no body after a HEAD (§6.3)",
            bytes: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", toHEAD: true,
            responses: ["HTTP/1.1 200 [\"Content-Length: 10\"] body 0 ended true"]),
        Accepted(
            rule: "interim responses come before the final one, each a head of its own (RFC 9110 §15.2)",
            bytes:
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            responses: ["HTTP/1.1 200 [\"Content-Length: 2\"] body 2 ended true"], interim: [100, 103]),
        Accepted(
            rule: "without a length, the body is what comes until the origin closes (§6.3)",
            bytes: "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it", closed: true,
            responses: ["HTTP/1.0 200 [\"Content-Type: text/plain\"] body 9 ended true"]),
        Accepted(
            rule: "a Transfer-Encoding that does not end in chunked: until the close (§6.3)",
            bytes: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzipped", closed: true,
            responses: ["HTTP/1.1 200 [\"Transfer-Encoding: gzip\"] body 6 ended true"]),
        Accepted(
            rule: "a status line with an empty reason, with or without its space (§4)",
            bytes: "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\nHTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
            responses: [
                "HTTP/1.1 200 [\"Content-Length: 0\"] body 0 ended true",
                "HTTP/1.1 200 [\"Content-Length: 0\"] body 0 ended true",
            ]),
    ]

    @Test("responses it takes", arguments: accepted)
    func takes(_ row: Accepted) {
        let bytes = Array(row.bytes.utf8)
        for readSize in [nil, 1, 2, 7] as [Int?] {
            let parsed = ResponseParser.parse(bytes, readSize: readSize, closed: row.closed, toHEAD: row.toHEAD)
            #expect(parsed.error == nil, "\(row.rule): \(String(describing: parsed.error))")
            #expect(parsed.responses.map(\.description) == row.responses, "\(row.rule), reads of \(readSize ?? 0)")
            #expect(parsed.interim == row.interim, "\(row.rule)")
        }
        if !row.toHEAD {
            #expect(
                ReferenceResponseParsing.parse(bytes).filter(\.ended) == ResponseParser.parse(bytes).responses,
                "SwiftNIO's decoder reads the same: \(row.rule)")
        }
    }

    static let refused: [(rule: String, bytes: String)] = [
        (
            "Transfer-Encoding beside Content-Length",
            "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        ),
        ("two Content-Length fields", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"),
        ("a Content-Length that is not a number", "HTTP/1.1 200 OK\r\nContent-Length: 3x\r\n\r\nabc"),
        ("Transfer-Encoding in HTTP/1.0", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("a bare LF", "HTTP/1.1 200 OK\nContent-Length: 0\n\n"),
        ("obsolete line folding", "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n"),
        ("a control character in a value", "HTTP/1.1 200 OK\r\nX: a\u{01}\r\nContent-Length: 0\r\n\r\n"),
        ("HTTP/2.0 in a status line", "HTTP/2.0 200 OK\r\n\r\n"),
        ("a status code that is not three digits", "HTTP/1.1 20x OK\r\n\r\n"),
        ("not a status line", "SSH-2.0-OpenSSH\r\n\r\n"),
        ("a chunk size that is not hexadecimal", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        ("chunk data not followed by CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n"),
        ("a body cut short by the close", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"),
        ("a head cut short by the close", "HTTP/1.1 200 OK\r\nContent-Le"),
    ]

    @Test("responses it refuses (the proxy's client gets a 502)", arguments: refused.indices)
    func refuses(_ index: Int) {
        let row = Self.refused[index]
        let parsed = ResponseParser.parse(Array(row.bytes.utf8), closed: true)
        #expect(parsed.error is HTTPParseError, "\(row.rule): \(parsed.responses)")
        #expect(parsed.responses.allSatisfy { !$0.ended }, "\(row.rule)")
    }

    @Test("persistence: HTTP/1.1 unless Connection: close, HTTP/1.0 only with keep-alive, never until the close")
    func keepAlive() throws {
        func head(_ text: String) throws -> ResponseHead? {
            var parser = ResponseParser()
            parser.append(ByteBuffer(string: text))
            if case .head(let head)? = try parser.next() { return head }
            return nil
        }
        #expect(try head("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")?.keepAlive == true)
        #expect(try head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")?.keepAlive == false)
        #expect(try head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n")?.keepAlive == false)
        #expect(try head("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n")?.keepAlive == true)
        #expect(try head("HTTP/1.1 200 OK\r\n\r\n")?.keepAlive == false, "a body until the close")
        #expect(
            try head("HTTP/1.1 200 Fine Thanks\r\nContent-Length: 0\r\n\r\n").map { $0.string($0.reason) }
                == "Fine Thanks")
    }
}
