import Foundation
import Testing
import WebCache
import WebCacheTestSupport

@Suite("The proxy at the edges of HTTP/1.1 (RFC 9112, RFC 9110)", .serialized)
struct ProxyEdgeTests {
    static func withOrigin(_ body: (TestOrigin, Int) async throws -> Void) async throws {
        try await TestOrigin.with { origin in
            origin.route("/a") { _ in .text("first", headers: [("Cache-Control", "max-age=60")]) }
            origin.route("/b") { _ in .text("second", headers: [("Cache-Control", "max-age=60")]) }
            origin.route("/upload") { request in .text("got \(request.body.count) bytes") }
            try await ProxyTests.withProxy(origin) { port, _ in try await body(origin, port) }
        }
    }

    static func responses(in text: String) -> [String] {
        text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { String($0.prefix(3)) }
    }

    /// Routes `/slow`, whose body the origin holds after its first byte until the returned gate
    /// opens (a miss on its way), and `/a`, a fresh page.
    static func routeSlowMiss(_ origin: TestOrigin) -> OriginGate {
        let rest = OriginGate()
        origin.route("/slow") { _ in
            var response = TestOrigin.Response.text("slow", headers: [("Cache-Control", "max-age=60")])
            response.pauseAfter = 1
            response.pauseUntil = rest
            return response
        }
        origin.route("/a") { _ in .text("first", headers: [("Cache-Control", "max-age=60")]) }
        return rest
    }

    @Test(
        "requests pipelined while a miss is on its way — one, then a burst of fifty — are answered after it, in order, on a real socket"
    )
    func pipelinedBehindMiss() async throws {
        try await TestOrigin.with { origin in
            let rest = Self.routeSlowMiss(origin)
            origin.route("/b") { _ in .text("second", headers: [("Cache-Control", "max-age=60")]) }
            try await ProxyTests.withProxy(origin) { port, _ in
                let connection = try RawHTTPClient.sendWithoutReading(
                    port: port, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                defer { RawHTTPClient.close(connection) }
                await rest.arrivals(1)  // the miss is on its way, its body held at the origin
                RawHTTPClient.sendMore(connection, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
                let burst = (0..<50).map { "GET /\($0 % 2 == 0 ? "b" : "a") HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
                RawHTTPClient.sendMore(connection, burst + "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                rest.open()
                let answer = try #require(await RawHTTPClient.receiveUntilClosed(connection, timeout: 10))
                let bodies = answer.components(separatedBy: "HTTP/1.1 ").dropFirst().map {
                    $0.components(separatedBy: "\r\n\r\n").last ?? ""
                }
                let expected = ["slow", "first"] + (0..<50).map { $0 % 2 == 0 ? "second" : "first" } + ["first"]
                #expect(Self.responses(in: answer) == Array(repeating: "200", count: 53))
                #expect(bodies == expected)
                #expect(origin.count("/a") == 1 && origin.count("/b") == 1)
            }
        }
    }

    @Test(
        "requests pipelined behind an answer its origin leaves unfinished are not sent on: the client sees the answer cut short by the close, and the origin gets neither the GET nor the POST behind it"
    )
    func pipelinedBehindCutAnswer() async throws {
        try await TestOrigin.with { origin in
            let rest = Self.routeSlowMiss(origin)
            origin.route("/p") { _ in .text("posted") }
            try await ProxyTests.withProxy(origin, originTimeout: .milliseconds(500)) { port, _ in
                // All in one write: both wait behind /slow before its origin goes quiet.
                let connection = try RawHTTPClient.sendWithoutReading(
                    port: port,
                    "GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /a HTTP/1.1\r\nHost: x\r\n\r\n"
                        + "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
                defer { RawHTTPClient.close(connection) }
                let answer = try #require(await RawHTTPClient.receiveUntilClosed(connection, timeout: 10))
                #expect(Self.responses(in: answer) == ["200"])
                #expect(answer.hasSuffix("\r\n\r\ns"), "\(answer)")
                // A request handled after the close would reach the origin at once; give it time to.
                try await Task.sleep(for: .milliseconds(300))
                #expect(origin.count("/a") == 0)
                #expect(origin.count("/p") == 0)
                rest.open()
            }
        }
    }

    @Test(
        "thousands of requests pipelined behind a miss, answered from the store when it ends, are answered in a loop: in order, and without growing the stack"
    )
    func longBurstBehindMiss() async throws {
        try await TestOrigin.with { origin in
            let rest = Self.routeSlowMiss(origin)
            try await ProxyTests.withProxy(origin) { port, _ in
                let warm = try await RawHTTPClient.exchange(
                    port: port, "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(warm.hasSuffix("first"))
                let connection = try RawHTTPClient.sendWithoutReading(
                    port: port, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
                defer { RawHTTPClient.close(connection) }
                await rest.arrivals(1)
                // One read takes up to four socket reads (2 + 4 + 8 + 16 KiB): about a thousand of
                // these wait behind the miss. Six hundred overflowed a debug build's stack.
                let count = 3_000
                let burst = String(repeating: "GET /a HTTP/1.1\r\nHost: x\r\n\r\n", count: count)
                RawHTTPClient.sendMore(connection, burst + "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                try await Task.sleep(for: .milliseconds(300))
                rest.open()
                let answer = try #require(await RawHTTPClient.receiveUntilClosed(connection, timeout: 20))
                let bodies = answer.components(separatedBy: "HTTP/1.1 ").dropFirst().map {
                    $0.components(separatedBy: "\r\n\r\n").last ?? ""
                }
                #expect(bodies.count == count + 2)
                #expect(bodies == ["slow"] + Array(repeating: "first", count: count + 1))
                #expect(origin.count("/a") == 1)
            }
        }
    }

    @Test("a request followed by the client's half-close is answered")
    func halfClose() async throws {
        try await Self.withOrigin { _, port in
            let answer = try await RawHTTPClient.exchange(
                port: port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n", halfClose: true)
            #expect(answer.hasPrefix("HTTP/1.1 200") && answer.hasSuffix("first"))
        }
    }

    @Test("Connection: close followed by a pipelined request: one answer, then the connection closes")
    func closeThenPipelined() async throws {
        try await Self.withOrigin { _, port in
            let answer = try await RawHTTPClient.exchange(
                port: port, "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(Self.responses(in: answer) == ["200"])
            #expect(answer.hasSuffix("first"))
        }
    }

    @Test("a valid request followed by garbage: its answer, then 400")
    func validThenGarbage() async throws {
        try await Self.withOrigin { _, port in
            let answer = try await RawHTTPClient.exchange(
                port: port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\nNOT HTTP AT ALL\r\n\r\n")
            #expect(Self.responses(in: answer) == ["200", "400"])
        }
    }

    @Test(
        "Host: missing in HTTP/1.1, repeated, or not a valid authority is refused with 400 and never forwarded (RFC 9112 §3.2)",
        arguments: [
            "GET /a HTTP/1.1\r\nConnection: close\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: user@x\r\nConnection: close\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x y\r\nConnection: close\r\n\r\n",
            "GET /a HTTP/1.1\r\nHost: x:port\r\nConnection: close\r\n\r\n",
        ])
    func hostRefused(request: String) async throws {
        try await Self.withOrigin { origin, port in
            let answer = try await RawHTTPClient.exchange(port: port, request)
            #expect(answer.hasPrefix("HTTP/1.1 400"), "\(answer.prefix(60))")
            #expect(origin.count("/a") == 0)
        }
    }

    @Test(
        "valid Host forms are accepted",
        arguments: ["x", "x:8080", "127.0.0.1:80", "[::1]:8080", "xn--bcher-kva.example"])
    func hostAccepted(host: String) async throws {
        try await Self.withOrigin { _, port in
            let answer = try await RawHTTPClient.exchange(
                port: port, "GET /a HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            #expect(answer.hasPrefix("HTTP/1.1 200"))
        }
        let http10 = try await Self.withOriginAnswer("GET /a HTTP/1.0\r\n\r\n")  // HTTP/1.0 may omit Host
        #expect(http10.hasPrefix("HTTP/1.1 200") || http10.hasPrefix("HTTP/1.0 200"))
    }

    static func withOriginAnswer(_ request: String) async throws -> String {
        var answer = ""
        try await withOrigin { _, port in answer = try await RawHTTPClient.exchange(port: port, request) }
        return answer
    }

    @Test(
        "a chunked request body, in pieces and with extensions and trailers, reaches the origin whole with its length; the next request on the connection follows it (RFC 9112 §7.1)"
    )
    func chunkedRequestBody() async throws {
        try await Self.withOrigin { origin, port in
            let connection = try RawHTTPClient.sendWithoutReading(
                port: port,
                "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5;note=\"a b\"\r\nhel")
            defer { RawHTTPClient.close(connection) }
            try await Task.sleep(for: .milliseconds(50))
            RawHTTPClient.sendMore(connection, "lo\r\n6\r\n world\r\n0\r\nX-Checksum: 1\r\n\r\n")
            RawHTTPClient.sendMore(connection, "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let answers = await RawHTTPClient.receiveUntilClosed(connection, timeout: 5) ?? ""
            #expect(Self.responses(in: answers) == ["200", "200"], "\(answers)")
            #expect(answers.contains("got 11 bytes") && answers.hasSuffix("first"), "\(answers)")
            let upload = try #require(origin.requests(to: "/upload").first)
            #expect(String(decoding: upload.body, as: UTF8.self) == "hello world")
            #expect(upload.headers.contains { $0.0.lowercased() == "content-length" && $0.1 == "11" })
            #expect(!upload.headers.contains { $0.0.lowercased() == "transfer-encoding" })
        }
    }

    @Test(
        "a client that pipelines requests for a stored 64 KB answer and never reads is not read from once its answers pile up: it cannot make the proxy hold more"
    )
    func pipeliningWithoutReading() async throws {
        try await TestOrigin.with { origin in
            origin.route("/big") { _ in
                .init(
                    status: 200, headers: [("Cache-Control", "max-age=60")], body: Data(repeating: 7, count: 64 << 10))
            }
            try await ProxyTests.withProxy(origin) { port, _ in
                let stored = try await RawHTTPClient.exchange(
                    port: port, "GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(stored.hasPrefix("HTTP/1.1 200"))
                let connection = try RawHTTPClient.openIdleConnection(port: port)
                defer { RawHTTPClient.close(connection) }
                // Each request is 33 bytes and its answer 64 KB: a proxy that went on reading would
                // take all 20 MB (600,000 answers, 40 GB). One that stops reading once its answers
                // pass the high watermark takes what the socket buffers hold.
                let sent = await RawHTTPClient.sendUntilStalled(
                    connection, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", limit: 20 << 20, stalled: 1)
                #expect(sent < 4 << 20, "\(sent) bytes of requests taken from a client that reads nothing")
            }
            // Only the first request reached the origin: every other was a hit.
            #expect(origin.count("/big") == 1)
        }
    }

    @Test("Expect: 100-continue gets 100 Continue before the final answer")
    func expectContinue() async throws {
        try await Self.withOrigin { _, port in
            let answer = try await RawHTTPClient.exchange(
                port: port,
                "POST /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello"
            )
            #expect(Self.responses(in: answer) == ["100", "200"])
            #expect(answer.hasSuffix("got 5 bytes"))
        }
    }

    @Test("a client that stops reading a large miss is let go after the idle timeout; the store is still filled")
    func clientStopsReading() async throws {
        try await TestOrigin.with { origin in
            let big = Data(repeating: 0x61, count: 8 << 20)
            origin.route("/big") { _ in TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: big) }
            try await ProxyTests.withProxy(origin, configure: { $0.idleTimeout = .seconds(1) }) { port, _ in
                let connection = try RawHTTPClient.sendWithoutReading(
                    port: port, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
                defer { RawHTTPClient.close(connection) }
                try await Task.sleep(for: .milliseconds(2500))
                // Asked on a connection of its own, which is then the only one open.
                let metrics = try await RawHTTPClient.exchange(
                    port: port, "GET /_webcache/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(
                    metrics.contains("webcache_proxy_connections_open 1.0"),
                    "the proxy still holds the connection of a client that stopped reading")
                #expect(await RawHTTPClient.drainsToClose(connection, timeout: 3))
                let again = try await RawHTTPClient.exchange(
                    port: port, "GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(again.contains("Cache-Status: WebCache; hit"))
                #expect(origin.count("/big") == 1)
            }
        }
    }

    @Test(
        "a request head trickled byte by byte gets 408 and the connection closes at the head timeout, though each byte resets the idle timeout"
    )
    func slowHead() async throws {
        try await TestOrigin.with { origin in
            origin.route("/a") { _ in .text("first") }
            try await ProxyTests.withProxy(origin, configure: { $0.requestHeadTimeout = .seconds(1) }) { port, _ in
                let connection = try RawHTTPClient.sendWithoutReading(port: port, "GET /a HTTP/1.1\r\nHo")
                defer { RawHTTPClient.close(connection) }
                for byte in "st: x\r\nX-Slow: yes".map(String.init).prefix(10) {
                    try await Task.sleep(for: .milliseconds(250))
                    RawHTTPClient.sendMore(connection, byte)
                }
                let answer = await RawHTTPClient.receiveUntilClosed(connection, timeout: 3)
                #expect(answer?.hasPrefix("HTTP/1.1 408") == true, "\(answer ?? "still open")")
                #expect(origin.count("/a") == 0)
                // A keep-alive connection that is simply quiet between requests is not affected.
                let quiet = try RawHTTPClient.sendWithoutReading(port: port, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
                defer { RawHTTPClient.close(quiet) }
                try await Task.sleep(for: .milliseconds(1500))
                RawHTTPClient.sendMore(quiet, "GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                let both = await RawHTTPClient.receiveUntilClosed(quiet, timeout: 3) ?? ""
                #expect(Self.responses(in: both) == ["200", "200"])
            }
        }
    }

    @Test(
        "bytes the parser cannot take: 501 for an unknown method, 505 for a version other than 1.0 and 1.1, 400 for the rest; M-SEARCH, which it knows, is forwarded as sent",
        arguments: [
            ("FROBNICATE /a HTTP/1.1\r\nHost: x\r\n\r\n", "501"),
            ("get /a HTTP/1.1\r\nHost: x\r\n\r\n", "501"),
            ("M-SEARCH /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "200"),
            ("GET /a HTTP/1.1\r\nHost: x\r\n\r\nFROBNICATE /a HTTP/1.1\r\nHost: x\r\n\r\n", "200 501"),
            ("\u{16}\u{03}\u{01}\u{02}\u{00} binary\r\n\r\n", "400"),
            ("garbage\r\n\r\n", "400"),
            ("GET /a HTTP/3.0\r\nHost: x\r\n\r\n", "505"),
            ("GET /a HTTP/1.2\r\nHost: x\r\n\r\n", "505"),
            ("GET /a HTTP/1.1\r\nBad Header Line\r\n\r\n", "400"),
        ])
    func parserRefusals(request: String, expected: String) async throws {
        try await Self.withOrigin { origin, port in
            let answer = try await RawHTTPClient.exchange(port: port, request)
            let statuses = Self.responses(in: answer)
            #expect(statuses == expected.split(separator: " ").map(String.init), "\(answer.prefix(400))")
            #expect(origin.count("/a") == statuses.filter { $0 == "200" }.count)
        }
    }

    @Test(
        "reverse mode keys by the upstream, never by the client's Host: another Host gets the same entry, and the origin sees its own"
    )
    func reverseKeysByUpstream() async throws {
        try await Self.withOrigin { origin, port in
            let first = try await RawHTTPClient.exchange(
                port: port, "GET /a HTTP/1.1\r\nHost: shop.example\r\nConnection: close\r\n\r\n")
            let second = try await RawHTTPClient.exchange(
                port: port, "GET /a HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n")
            #expect(first.contains("first") && second.contains("first"))
            #expect(origin.count("/a") == 1, "one entry for /a whatever Host the clients sent")
            #expect(origin.requests(to: "/a").first?.header("Host") == "127.0.0.1:\(origin.port)")
        }
    }
}
