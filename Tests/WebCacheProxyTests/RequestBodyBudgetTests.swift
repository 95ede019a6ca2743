import Foundation
import Testing
import WebCacheProxy
import WebCacheTestSupport

/// The request bodies the proxy holds at once, over all connections
/// (`ProxyConfiguration.maximumBufferedRequestBodies`): here 1,000 bytes, bodies up to 800 each.
@Suite("The caching proxy: request bodies held at once are bounded")
struct RequestBodyBudgetTests {
    static func with(_ body: (SocketlessProxy) async throws -> Void) async throws {
        try await SocketlessProxy.with(configure: {
            $0.maximumRequestBodySize = 800
            $0.maximumBufferedRequestBodies = 1000
            $0.idleTimeout = .seconds(60)
        }) { server in try await body(server) }
    }

    static func post(_ path: String, bytes: Int) -> String {
        "POST \(path) HTTP/1.1\r\nHost: origin.test\r\nContent-Length: \(bytes)\r\n\r\n"
            + String(repeating: "b", count: bytes)
    }

    /// A connection whose request to `path` declares `declared` body bytes and has sent `sent`
    /// of them: it holds `declared` of the budget until it ends.
    static func holding(
        _ server: SocketlessProxy, _ path: String, declared: Int, sent: Int = 0
    ) async throws -> ProxyConnection {
        let connection = try await server.connect()
        try await connection.send(
            "POST \(path) HTTP/1.1\r\nHost: origin.test\r\nContent-Length: \(declared)\r\n\r\n"
                + String(repeating: "s", count: sent))
        await connection.settle()
        return connection
    }

    @Test("a body that does not fit beside those held gets 503 with Retry-After; once they are answered it fits")
    func declaredLengths() async throws {
        try await Self.with { server in
            // 600 bytes reserved by a body still arriving.
            let slow = try await Self.holding(server, "/slow", declared: 600, sent: 300)
            let refused = try await server.connect()
            let answer = try await refused.answer(to: Self.post("/refused", bytes: 500))
            #expect(answer.status == 503)
            #expect(answer.field("Retry-After") == "1")
            #expect(answer.text.contains("cannot take 500 more"))
            #expect(try await refused.responses(1, timeout: .seconds(5)).closed)
            // One that fits beside it goes through.
            let fits = try await server.connect()
            #expect(try await fits.answer(to: Self.post("/fits", bytes: 400)).status == 200)
            // The slow body ends and is answered; then the one refused fits.
            try await slow.send(String(repeating: "s", count: 300))
            let (answers, _) = try await slow.responses(1)
            #expect(answers.map(\.status) == [200])
            let again = try await server.connect()
            #expect(try await again.answer(to: Self.post("/refused", bytes: 500)).status == 200)
            #expect(server.origin.count("/refused") == 1)
            #expect(server.origin.count("/slow") == 1)
            for connection in [slow, refused, fits, again] { await connection.close() }
        }
    }

    @Test("a chunked body reserves as its chunks come, and is refused at the chunk that does not fit")
    func chunked() async throws {
        try await Self.with { server in
            let holder = try await Self.holding(server, "/holder", declared: 700)
            let chunked = try await server.connect()
            try await chunked.send(
                "POST /chunked HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "c8\r\n" + String(repeating: "c", count: 200) + "\r\n")
            await chunked.settle()
            #expect(try await chunked.responses(1, timeout: .milliseconds(100)).responses.isEmpty)
            try await chunked.send("c8\r\n" + String(repeating: "c", count: 200) + "\r\n0\r\n\r\n")
            let (answers, closed) = try await chunked.responses(1)
            #expect(answers.map(\.status) == [503])
            #expect(closed)
            #expect(server.origin.count("/chunked") == 0)
            // What the refused request had reserved is given back: 300 bytes fit beside the 700.
            let fits = try await server.connect()
            #expect(try await fits.answer(to: Self.post("/fits", bytes: 300)).status == 200)
            for connection in [holder, chunked, fits] { await connection.close() }
        }
    }

    @Test("a client that goes away in the middle of its body gives back what it reserved")
    func abandoned() async throws {
        try await Self.with { server in
            let leaving = try await Self.holding(server, "/leaving", declared: 800, sent: 100)
            let refused = try await server.connect()
            #expect(try await refused.answer(to: Self.post("/next", bytes: 800)).status == 503)
            await leaving.close()
            let next = try await server.connect()
            #expect(try await next.answer(to: Self.post("/next", bytes: 800)).status == 200)
            #expect(server.origin.count("/leaving") == 0)
            for connection in [refused, next] { await connection.close() }
        }
    }

    @Test("a refused body with Expect: 100-continue is refused before the client sends it")
    func expectContinue() async throws {
        try await Self.with { server in
            let holder = try await Self.holding(server, "/holder", declared: 700)
            let waiting = try await server.connect()
            try await waiting.send(
                "POST /waiting HTTP/1.1\r\nHost: origin.test\r\nExpect: 100-continue\r\nContent-Length: 400\r\n\r\n")
            let (answers, closed) = try await waiting.responses(1)
            #expect(answers.map(\.status) == [503])
            #expect(closed)
            for connection in [holder, waiting] { await connection.close() }
        }
    }
}
