import NIOCore
import NIOHTTP1
import Testing
import WebCacheTestSupport

@testable import HTTPWire

@Suite("The request parser (RFC 9112), strict where leniency lets parsers disagree")
struct RequestParserTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        var rule: String
        var bytes: String
        /// The requests parsed, as `ParsedRequest.description` gives them.
        var requests: [String]

        var testDescription: String { rule }
    }

    static let accepted: [Accepted] = [
        Accepted(
            rule: "a GET: request line, fields in order, no body (§3, §5, §6.3)",
            bytes: "GET /a?q=1 HTTP/1.1\r\nHost: shop.test\r\nAccept: */*\r\n\r\n",
            requests: ["GET /a?q=1 HTTP/1.1 [\"Host: shop.test\", \"Accept: */*\"] body 0 ended true"]),
        Accepted(
            rule: "whitespace around a value is not part of it; an empty value is one (§5)",
            bytes: "GET / HTTP/1.1\r\nHost:shop.test \t\r\nX-Empty:\r\nX-Spaced:  a  b \r\n\r\n",
            requests: ["GET / HTTP/1.1 [\"Host: shop.test\", \"X-Empty: \", \"X-Spaced: a  b\"] body 0 ended true"]),
        Accepted(
            rule: "empty lines before a request line are ignored (§2.2)",
            bytes: "\r\n\r\nGET / HTTP/1.0\r\n\r\n",
            requests: ["GET / HTTP/1.0 [] body 0 ended true"]),
        Accepted(
            rule: "a body of Content-Length bytes, then the next request (§6.3)",
            bytes: "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 005 \r\n\r\nhelloGET / HTTP/1.1\r\n\r\n",
            requests: [
                "POST /p HTTP/1.1 [\"Host: a\", \"Content-Length: 005\"] body 5 ended true",
                "GET / HTTP/1.1 [] body 0 ended true",
            ]),
        Accepted(
            rule: "a chunked body with extensions and trailers (§7.1)",
            bytes:
                "POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;name=\"v a\"\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-Trailer: t\r\n\r\nGET / HTTP/1.1\r\n\r\n",
            requests: [
                "POST /p HTTP/1.1 [\"Host: a\", \"Transfer-Encoding: chunked\"] body 31 ended true",
                "GET / HTTP/1.1 [] body 0 ended true",
            ]),
        Accepted(
            rule: "a chunked body without trailers",
            bytes: "PUT /p HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
            requests: ["PUT /p HTTP/1.1 [\"Transfer-Encoding: chunked\"] body 3 ended true"]),
        Accepted(
            rule: "obs-text in a value is kept as it came; a target may hold what clients leave unencoded",
            bytes: "GET /a\"<>{}|^`?q=[1] HTTP/1.1\r\nX-Name: Andr\u{E9}\r\n\r\n",
            requests: ["GET /a\"<>{}|^`?q=[1] HTTP/1.1 [\"X-Name: Andr\u{E9}\"] body 0 ended true"]),
        Accepted(
            rule: "methods the proxy knows beyond the usual ones",
            bytes: "M-SEARCH * HTTP/1.1\r\n\r\nPROPFIND /d HTTP/1.1\r\n\r\nQUERY /q HTTP/1.1\r\n\r\n",
            requests: [
                "MSEARCH * HTTP/1.1 [] body 0 ended true", "PROPFIND /d HTTP/1.1 [] body 0 ended true",
                "QUERY /q HTTP/1.1 [] body 0 ended true",
            ]),
        Accepted(
            rule: "a head cut short is a head not yet come",
            bytes: "GET / HTTP/1.1\r\nHost: a\r\n",
            requests: []),
    ]

    @Test("requests it takes", arguments: accepted)
    func takes(_ row: Accepted) {
        let bytes = Array(row.bytes.utf8)
        for readSize in [nil, 1, 2, 3, 7] as [Int?] {
            let parsed = RequestParser.parse(bytes, readSize: readSize)
            #expect(parsed.error == nil, "\(row.rule), reads of \(readSize ?? bytes.count)")
            #expect(
                parsed.requests.map(\.description) == row.requests, "\(row.rule), reads of \(readSize ?? bytes.count)")
        }
        // SwiftNIO's parser reads the same requests from the same bytes (it keeps whitespace
        // after a value, which RFC 9110 §5.5 says is not part of it).
        let reference = ReferenceParsing.parse(bytes, trimmingValues: true)
        #expect(
            reference.requests.filter(\.ended) == RequestParser.parse(bytes).requests.filter(\.ended), "\(row.rule)")
    }

    struct Refused: Sendable, CustomTestStringConvertible {
        var rule: String
        var bytes: String
        var status: Int

        var testDescription: String { "\(rule): \(status)" }
    }

    static let refused: [Refused] = [
        Refused(rule: "a line ending in a bare LF (§2.2)", bytes: "GET / HTTP/1.1\nHost: a\n\n", status: 400),
        Refused(rule: "a field line ending in a bare LF", bytes: "GET / HTTP/1.1\r\nHost: a\n\r\n", status: 400),
        Refused(rule: "a bare CR in a value (§2.2)", bytes: "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", status: 400),
        Refused(rule: "whitespace before the colon (§5.1)", bytes: "GET / HTTP/1.1\r\nHost : a\r\n\r\n", status: 400),
        Refused(rule: "obsolete line folding (§5.2)", bytes: "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", status: 400),
        Refused(rule: "a control character in a value", bytes: "GET / HTTP/1.1\r\nX: a\u{01}b\r\n\r\n", status: 400),
        Refused(rule: "a NUL in a value", bytes: "GET / HTTP/1.1\r\nX: a\u{00}b\r\n\r\n", status: 400),
        Refused(rule: "a field name that is not a token", bytes: "GET / HTTP/1.1\r\nHo\u{13}t: a\r\n\r\n", status: 400),
        Refused(rule: "a field line without a name", bytes: "GET / HTTP/1.1\r\n: a\r\n\r\n", status: 400),
        Refused(rule: "a field line without a colon", bytes: "GET / HTTP/1.1\r\nHost\r\n\r\n", status: 400),
        Refused(
            rule: "Transfer-Encoding beside Content-Length (§6.3, a smuggling attempt)",
            bytes: "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400),
        Refused(
            rule: "two different Content-Length values (§6.3)",
            bytes: "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", status: 400),
        Refused(
            rule: "a list of lengths, even equal ones", bytes: "POST / HTTP/1.1\r\nContent-Length: 4, 4\r\n\r\nabcd",
            status: 400),
        Refused(
            rule: "the same length twice",
            bytes: "POST / HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nabcd",
            status: 400),
        Refused(
            rule: "a length that is not a number", bytes: "POST / HTTP/1.1\r\nContent-Length: 3a\r\n\r\n", status: 400),
        Refused(rule: "a negative length", bytes: "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", status: 400),
        Refused(rule: "an empty length", bytes: "POST / HTTP/1.1\r\nContent-Length: \r\n\r\n", status: 400),
        Refused(
            rule: "a length of 19 digits (overflow)",
            bytes: "POST / HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n\r\n", status: 400),
        Refused(
            rule: "a Transfer-Encoding that does not end in chunked (§6.3)",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", status: 400),
        Refused(
            rule: "a transfer coding besides chunked, which the body would be forwarded without (§6.1)",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", status: 501),
        Refused(
            rule: "chunked twice (§7)",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            status: 400),
        Refused(
            rule: "Transfer-Encoding in HTTP/1.0 (§6.1)",
            bytes: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400),
        Refused(
            rule: "a chunk size that is not hexadecimal",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 400),
        Refused(
            rule: "a chunk size of 16 digits (overflow)",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", status: 400),
        Refused(
            rule: "chunk data not followed by CRLF",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n", status: 400),
        Refused(
            rule: "a chunk size followed by something other than an extension",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3 x\r\nabc\r\n", status: 400),
        Refused(
            rule: "whitespace between a chunk size and its extension",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3 ;a=b\r\nabc\r\n", status: 400),
        Refused(
            rule: "a chunk extension with a control character",
            bytes: "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;a\u{01}\r\nabc\r\n", status: 400),
        Refused(rule: "HTTP/1.2 (RFC 9110 §15.6.6)", bytes: "GET / HTTP/1.2\r\n\r\n", status: 505),
        Refused(rule: "HTTP/2.0 in an HTTP/1 request line", bytes: "PRI * HTTP/2.0\r\n\r\n", status: 505),
        Refused(rule: "a version of two digits", bytes: "GET / HTTP/1.10\r\n\r\n", status: 400),
        Refused(rule: "an unknown method (RFC 9110 §9.1)", bytes: "FROBNICATE / HTTP/1.1\r\n\r\n", status: 501),
        Refused(
            rule: "a method in lowercase (methods are case-sensitive)", bytes: "get / HTTP/1.1\r\n\r\n", status: 501),
        Refused(rule: "not a request line", bytes: "THIS IS NOT HTTP\r\n\r\n", status: 400),
        Refused(rule: "two spaces after the method", bytes: "GET  / HTTP/1.1\r\n\r\n", status: 400),
        Refused(rule: "a control character in the target", bytes: "GET /a\u{7F}b HTTP/1.1\r\n\r\n", status: 400),
        Refused(rule: "raw UTF-8 in the target", bytes: "GET /caf\u{E9} HTTP/1.1\r\n\r\n", status: 400),
        Refused(rule: "raw UTF-8 in a field name", bytes: "GET / HTTP/1.1\r\nX\u{E9}: a\r\n\r\n", status: 400),
        Refused(rule: "DEL in a value", bytes: "GET / HTTP/1.1\r\nX: a\u{7F}b\r\n\r\n", status: 400),
        Refused(rule: "a request line without a version", bytes: "GET /\r\n\r\n", status: 400),
        Refused(
            rule: "a head over the limit, before it ends (RFC 6585 §5)",
            bytes: "GET / HTTP/1.1\r\nX: \(String(repeating: "a", count: 40_000))", status: 431),
        Refused(
            rule: "a head over the limit",
            bytes: "GET / HTTP/1.1\r\nX: \(String(repeating: "a", count: 33_000))\r\n\r\n", status: 431),
        Refused(
            rule: "more fields than the limit",
            bytes: "GET / HTTP/1.1\r\n\(String(repeating: "a:\r\n", count: 1025))\r\n", status: 431),
    ]

    @Test("bytes it refuses, with the status that says why", arguments: refused)
    func refuses(_ row: Refused) {
        let bytes = Array(row.bytes.utf8)
        for readSize in [nil, 1, 5] as [Int?] {
            let parsed = RequestParser.parse(bytes, readSize: readSize)
            #expect((parsed.error as? HTTPParseError)?.status == row.status, "\(row.rule): \(parsed)")
        }
    }

    @Test("a head's facts: persistence (§9.3), Expect (RFC 9110 §10.1.1), Host, upgrades")
    func facts() throws {
        let http11 = try RequestHead.parsing("GET / HTTP/1.1\r\nhOsT: a.test\r\nExpect: 100-Continue\r\n\r\n")
        #expect(http11.keepAlive && http11.expectsContinue && http11.hostFieldCount == 1 && http11.host == "a.test")
        #expect(!(try RequestHead.parsing("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n")).keepAlive)
        #expect(!(try RequestHead.parsing("GET / HTTP/1.0\r\n\r\n")).keepAlive)
        #expect((try RequestHead.parsing("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n")).keepAlive)
        #expect(!(try RequestHead.parsing("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n")).expectsContinue)
        let twoHosts = try RequestHead.parsing("GET / HTTP/1.1\r\nHost: a\r\nX: y\r\nHOST: b\r\n\r\n")
        #expect(twoHosts.hostFieldCount == 2 && twoHosts.firstHostField == 0)
        let upgrade = try RequestHead.parsing(
            "GET /chat HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n\r\n")
        #expect(upgrade.asksToUpgrade && upgrade.isWebSocketUpgrade)
        #expect(!(try RequestHead.parsing("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n")).asksToUpgrade)
        #expect(try RequestHead.parsing("GET / HTTP/1.1\r\nX: 1\r\n\r\n").size == 24)
        #expect(
            try RequestHead.parsing("GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\na: 3\r\n\r\n").values(named: "a") == ["1", "3"])
    }

    @Test("after a CONNECT or an upgrade it pauses: the bytes that follow are the tunnel's, or parsed on resume")
    func pauses() throws {
        var parser = RequestParser.standard()
        parser.append(
            ByteBuffer(
                string:
                    "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nContent-Length: 3\r\n\r\n\u{16}\u{03}\u{01}GET")
        )
        guard case .head(let head)? = try parser.next() else {
            Issue.record("no head")
            return
        }
        #expect(head.method == .CONNECT && head.framing == .none, "a CONNECT has no content (RFC 9110 §9.3.6)")
        guard case .end? = try parser.next() else {
            Issue.record("no end")
            return
        }
        #expect(try parser.next() == nil && parser.isPaused && !parser.isMidRequest)
        #expect(Array(parser.takeUnparsedBytes().readableBytesView) == [0x16, 0x03, 0x01] + Array("GET".utf8))

        var upgrading = RequestParser.standard()
        upgrading.append(
            ByteBuffer(
                string: "GET /s HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\nGET /next HTTP/1.1\r\n\r\n"
            ))
        _ = try upgrading.next()
        _ = try upgrading.next()
        #expect(try upgrading.next() == nil && upgrading.isPaused)
        upgrading.resume()
        guard case .head(let next)? = try upgrading.next() else {
            Issue.record("no head after resume")
            return
        }
        #expect(next.uri == "/next")
    }

    @Test("whether the client ending the connection cuts a request short")
    func midRequest() throws {
        var parser = RequestParser.standard()
        #expect(!parser.isMidRequest)
        parser.append(ByteBuffer(string: "\r\n"))
        #expect(try parser.next() == nil && !parser.isMidRequest, "empty lines before a request are not one")
        parser.append(ByteBuffer(string: "POST / HTTP/1.1\r\nContent-Length: 4\r\n"))
        #expect(try parser.next() == nil && parser.isMidRequest)
        parser.append(ByteBuffer(string: "\r\nab"))
        _ = try parser.next()
        _ = try parser.next()
        #expect(parser.isMidRequest)
        parser.append(ByteBuffer(string: "cd"))
        _ = try parser.next()
        _ = try parser.next()
        #expect(!parser.isMidRequest)
    }

    @Test("a head is a slice of the bytes read, and detached it holds only its own")
    func slices() throws {
        var parser = RequestParser.standard()
        var read = ByteBufferAllocator().buffer(capacity: 4096)
        read.writeString("GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: b\r\n\r\n")
        parser.append(read)
        guard case .head(let head)? = try parser.next() else {
            Issue.record("no head")
            return
        }
        let start = { (buffer: ByteBuffer) in buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } }
        #expect(start(head.bytes) == start(read), "the head is the read's own bytes")
        let detached = head.detached()
        #expect(start(detached.bytes) != start(read) && detached.bytes.capacity < 100)
        #expect(detached.uri == "/a" && detached.host == "a")
    }
}
