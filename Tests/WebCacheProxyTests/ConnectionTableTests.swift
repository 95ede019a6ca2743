import NIOCore
import Testing
import WebCacheProxy
import WebCacheTestSupport

/// The HTTP/1.1 edges of RFC 9112 and RFC 9110 at the level of one connection's handlers, as a
/// table: bytes in, answers out, on a connection without a socket whose clock the test moves.
/// `ProxyEdgeTests` checks the same behaviour over real sockets.
@Suite("One proxy connection, as a table of HTTP/1.1 edges")
struct ConnectionTableTests {
    /// What the client does, in order.
    enum Step: Sendable, CustomStringConvertible {
        case send(String)
        case halfClose
        /// Once the proxy has written `answered` final answers in all (and handled what follows
        /// them), the connection's clock moves on by `seconds`.
        case wait(seconds: Int64, answered: Int)

        var description: String {
            switch self {
            case .send(let text): "send \(text.debugDescription.prefix(60))"
            case .halfClose: "half-close"
            case .wait(let seconds, _): "wait \(seconds) s"
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var rule: String
        var steps: [Step]
        /// The statuses answered, in order (interim ones included).
        var statuses: [Int]
        /// Whether the proxy closes the connection afterwards.
        var closes: Bool
        /// The bodies of the final answers, where they matter.
        var bodies: [String]? = nil
        /// The methods of the requests answered, where one is `HEAD`.
        var methods: [String] = []
        /// Requests the origin receives.
        var fetches = 0
        /// The methods the origin receives, where they matter.
        var originMethods: [String]? = nil

        var testDescription: String { rule }
    }

    static let get = "GET /a HTTP/1.1\r\nHost: shop.test\r\n\r\n"

    static let rows: [Row] = [
        Row(
            rule: "a request is answered and the connection stays open", steps: [.send(get)], statuses: [200],
            closes: false,
            bodies: ["body of /a"], fetches: 1),
        Row(
            rule: "pipelined requests are answered in order (§9.3.2)",
            steps: [.send(get + "GET /b HTTP/1.1\r\nHost: shop.test\r\n\r\n" + get)], statuses: [200, 200, 200],
            closes: false,
            bodies: ["body of /a", "body of /b", "body of /a"], fetches: 2),
        Row(
            rule: "a request then the client's half-close: answered, then closed (§9.6)",
            steps: [.send(get), .halfClose],
            statuses: [200], closes: true, fetches: 1),
        Row(
            rule: "Connection: close then a pipelined request: one answer, then closed (§9.6)",
            steps: [
                .send(
                    "GET /a HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\nHost: shop.test\r\n\r\n"
                )
            ],
            statuses: [200], closes: true, fetches: 1),
        Row(
            rule: "an HTTP/1.0 request without keep-alive: answered, then closed",
            steps: [.send("GET /a HTTP/1.0\r\n\r\n")], statuses: [200], closes: true, fetches: 1),
        Row(
            rule: "a request then bytes that are not HTTP: its answer, then 400 and close",
            steps: [.send(get + "garbage\r\n\r\n")], statuses: [200, 400], closes: true, fetches: 1),
        Row(
            rule: "a miss and a hit pipelined, then bytes that are not HTTP: both answers, then one 400 and close",
            steps: [.send(get + get + "garbage\r\n\r\n")], statuses: [200, 200, 400], closes: true, fetches: 1),
        Row(
            rule: "two Host fields: 400, never forwarded (§3.2)",
            steps: [.send("GET /a HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n")], statuses: [400], closes: true),
        Row(
            rule: "no Host in HTTP/1.1: 400 (§3.2)", steps: [.send("GET /a HTTP/1.1\r\n\r\n")], statuses: [400],
            closes: true),
        Row(
            rule: "a Host with userinfo: 400", steps: [.send("GET /a HTTP/1.1\r\nHost: user@shop.test\r\n\r\n")],
            statuses: [400], closes: true),
        Row(
            rule: "a Host with a space: 400", steps: [.send("GET /a HTTP/1.1\r\nHost: shop test\r\n\r\n")],
            statuses: [400], closes: true),
        Row(
            rule: "an unknown method: 501 (RFC 9110 §9.1)",
            steps: [.send("FROBNICATE /a HTTP/1.1\r\nHost: shop.test\r\n\r\n")],
            statuses: [501], closes: true),
        Row(
            rule: "a body in a transfer coding besides chunked: 501, never forwarded without it (RFC 9112 §6.1)",
            steps: [
                .send(
                    "POST /a HTTP/1.1\r\nHost: shop.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                )
            ],
            statuses: [501], closes: true),
        Row(
            rule: "a line that is not a request line, though it starts with a token: 400",
            steps: [.send("THIS IS NOT HTTP\r\n\r\n")], statuses: [400], closes: true),
        Row(
            rule: "a method the parser knows but HTTP does not define (M-SEARCH) is forwarded",
            steps: [.send("M-SEARCH /a HTTP/1.1\r\nHost: shop.test\r\n\r\n")], statuses: [200], closes: false,
            fetches: 1,
            originMethods: ["M-SEARCH"]),
        Row(
            rule: "HTTP/1.2: 505 (RFC 9110 §15.6.6)", steps: [.send("GET /a HTTP/1.2\r\nHost: shop.test\r\n\r\n")],
            statuses: [505], closes: true),
        Row(
            rule: "Expect: 100-continue: 100, then the answer once the body came (RFC 9110 §10.1.1)",
            steps: [
                .send("POST /a HTTP/1.1\r\nHost: shop.test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"),
                .send("hello"),
            ],
            statuses: [100, 200], closes: false, fetches: 1),
        Row(
            rule: "Expect: 100-continue with a body over the limit: 413 at once, no 100",
            steps: [
                .send("POST /a HTTP/1.1\r\nHost: shop.test\r\nExpect: 100-continue\r\nContent-Length: 999999\r\n\r\n")
            ],
            statuses: [413], closes: true),
        Row(
            rule: "a head over the limit: 431",
            steps: [
                .send("GET /a HTTP/1.1\r\nHost: shop.test\r\nX-Big: \(String(repeating: "b", count: 2000))\r\n\r\n")
            ],
            statuses: [431], closes: true),
        Row(
            rule: "CONNECT to a reverse proxy: 405",
            steps: [.send("CONNECT shop.test:443 HTTP/1.1\r\nHost: shop.test:443\r\n\r\n")],
            statuses: [405], closes: false),
        Row(
            rule: "CONNECT to a reverse proxy, then a request on the same connection: 405, then its answer",
            steps: [.send("CONNECT shop.test:443 HTTP/1.1\r\nHost: shop.test:443\r\n\r\n" + get)],
            statuses: [405, 200], closes: false, fetches: 1),
        Row(
            rule: "an upgrade outside a tunnel is a plain request, and the one pipelined behind it is answered too",
            steps: [
                .send(
                    "GET /a HTTP/1.1\r\nHost: shop.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" + get)
            ],
            statuses: [200, 200], closes: false, fetches: 1),
        Row(
            rule: "a request cut short by the client's half-close: 400 and close",
            steps: [.send("POST /a HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 10\r\n\r\nabc"), .halfClose],
            statuses: [400], closes: true),
        Row(
            rule: "Transfer-Encoding beside Content-Length: 400, never forwarded (RFC 9112 §6.3)",
            steps: [
                .send(
                    "POST /a HTTP/1.1\r\nHost: shop.test\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                )
            ],
            statuses: [400], closes: true),
        Row(
            rule: "HEAD: an answer without a body, and the next request is read right after it",
            steps: [.send("HEAD /a HTTP/1.1\r\nHost: shop.test\r\n\r\n" + get)], statuses: [200, 200], closes: false,
            bodies: ["", "body of /a"], methods: ["HEAD", "GET"], fetches: 2),
        Row(
            rule: "a head still arriving after the head timeout: 408 and close",
            steps: [.send("GET /a HTTP/1.1\r\nHost: shop.test\r\n"), .wait(seconds: 11, answered: 0)],
            statuses: [408], closes: true),
        Row(
            rule: "a head still arriving after the head timeout, its first bytes sent while a miss was answered: 408",
            steps: [.send(get), .send("GET /a HTTP/1.1\r\nHost: shop.test\r\n"), .wait(seconds: 11, answered: 1)],
            statuses: [200, 408], closes: true, fetches: 1),
        Row(
            rule: "a connection quiet between requests outlives the head timeout",
            steps: [.send(get), .wait(seconds: 11, answered: 1), .send(get)], statuses: [200, 200], closes: false,
            fetches: 1),
        Row(
            rule: "a connection quiet for the idle timeout after an answer closes",
            steps: [.send(get), .wait(seconds: 31, answered: 1)], statuses: [200], closes: true, fetches: 1),
        Row(
            rule: "requests inside the idle timeout keep the connection open, however long it has been open",
            steps: [
                .send(get), .wait(seconds: 20, answered: 1), .send(get), .wait(seconds: 20, answered: 2), .send(get),
            ],
            statuses: [200, 200, 200], closes: false, fetches: 1),
        Row(
            rule:
                "a refused head with Expect: 100-continue is refused at once, whatever the refusal (here two Host fields)",
            steps: [
                .send(
                    "POST /a HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n"
                )
            ],
            statuses: [400], closes: true),
    ]

    @Test("edges of HTTP/1.1", arguments: rows)
    func edge(_ row: Row) async throws {
        try await SocketlessProxy.with(configure: {
            $0.maximumHeaderSize = 1024
            $0.maximumRequestBodySize = 1000
            $0.requestHeadTimeout = .seconds(10)
            $0.idleTimeout = .seconds(30)
        }) { server in
            let connection = try await server.connect()
            for step in row.steps {
                switch step {
                case .send(let text): try await connection.send(text)
                case .halfClose: try await connection.closeInput()
                case .wait(let seconds, let answered):
                    // What was sent is answered before the clock moves: a miss goes through the
                    // engine on a task, on the wall clock, and a flush or a time limit started at
                    // its end must not be dated after the move.
                    _ = try await connection.responses(answered, methods: row.methods)
                    await connection.settle()
                    await connection.advanceTime(by: .seconds(seconds))
                }
            }
            let finals = row.statuses.filter { $0 >= 200 }.count
            _ = try await connection.responses(finals, methods: row.methods)
            // Then a close, or the chance for a wrong close (or a wrong answer) to show.
            let (answers, closed) = try await connection.responses(
                finals + 1, methods: row.methods, timeout: row.closes ? .seconds(30) : .milliseconds(100))
            #expect(answers.map(\.status) == row.statuses, "\(row.rule)")
            #expect(closed == row.closes, "\(row.rule)")
            if let bodies = row.bodies {
                #expect(answers.filter { $0.status >= 200 }.map(\.text) == bodies)
            }
            #expect(server.origin.total == row.fetches, "requests that reached the origin")
            if let methods = row.originMethods { #expect(server.origin.methods == methods) }
            await connection.close()
        }
    }
}
