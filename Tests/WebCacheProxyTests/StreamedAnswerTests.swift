import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing
import WebCache
import WebCacheTestSupport

@testable import WebCacheNIO
@testable import WebCacheProxy

/// Answers whose bodies come from the origin as the proxy writes them: what has arrived goes
/// out in one write with what comes before it, and nothing waits for bytes that have not.
@Suite("Answers streamed from the origin")
struct StreamedAnswerTests {
    /// A 200 of `body`, with its length or (`chunked`) without.
    static func answer(_ body: String, chunked: Bool) -> OriginResponse {
        var fields = HTTPFields()
        fields[.cacheControl] = "max-age=60"
        if !chunked { fields[.contentLength] = String(body.utf8.count) }
        return OriginResponse(head: HTTPResponse(status: .ok, headerFields: fields), body: Data(body.utf8))
    }

    /// An origin whose every body, `body` with its length, arrives whole at once while its
    /// stream ends only once `gate` opens — as the engine ends a stream once it has committed
    /// the entry.
    static func endingAtGate(_ body: String, gate: OriginGate) -> InMemoryOrigin {
        InMemoryOrigin(holdingBodyAfter: body.utf8.count, until: gate) { _ in answer(body, chunked: false) }
    }

    /// A `GET` of `path` as a client sends it.
    static func get(_ path: String) -> String {
        "GET \(path) HTTP/1.1\r\nHost: test\r\n\r\n"
    }

    /// What `connection` has written once `done` holds of it (or 30 s have passed).
    static func written(_ connection: ProxyConnection, until done: (String) -> Bool) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            await connection.channel.testingEventLoop.run()
            let text = String(decoding: try await connection.written(), as: UTF8.self)
            if done(text) || ContinuousClock.now >= deadline { return text }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test(
        "chunks the origin's reads handed over without a copy are written as those buffers, in order between the ones copied; a chunked body is copied whole"
    )
    func originBuffersWrittenAsTheyAre() throws {
        func read(_ count: Int, seed: UInt8) -> ByteBuffer {
            ByteBuffer(bytes: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) })
        }
        func address(_ buffer: ByteBuffer) -> UnsafeRawPointer? { buffer.withUnsafeReadableBytes { $0.baseAddress } }
        let reads = [read(20_000, seed: 1), read(32_000, seed: 2)]
        let chunks = [Data("small, copied".utf8), reads[0].bodyChunk(), Data("between".utf8), reads[1].bodyChunk()]
        let expected = chunks.reduce(into: Data("HEAD".utf8)) { $0.append($1) }
        let size = chunks.map(\.count).reduce(0, +)

        var pending = ByteBuffer(string: "HEAD")
        let buffers = CachingProxy.carrying(chunks, after: &pending, size: size, chunked: false)
        #expect(buffers.count == 4, "head and copy, a read, a copy, a read; nothing left over")
        #expect(pending.readableBytes == 0)
        #expect(address(buffers[1]) == address(reads[0]) && address(buffers[3]) == address(reads[1]))
        let written = (buffers + [pending]).reduce(into: Data()) { $0.append(contentsOf: $1.readableBytesView) }
        #expect(written == expected)

        var chunkedPending = ByteBuffer(string: "HEAD")
        let chunkedBuffers = CachingProxy.carrying(chunks, after: &chunkedPending, size: size, chunked: true)
        #expect(chunkedBuffers.isEmpty)
        #expect(
            chunkedPending.readableBytes == 4 + size + chunks.map { String($0.count, radix: 16).count + 4 }.reduce(0, +)
        )
    }

    @Test(
        "a body still arriving: the head and the bytes that have arrived go out without waiting for the rest, which follows in order",
        arguments: [false, true])
    func headDoesNotWaitForTheRest(chunked: Bool) async throws {
        let gate = OriginGate()
        let body = String(repeating: "a", count: 1000) + String(repeating: "b", count: 2000)
        let origin = InMemoryOrigin(holdingBodyAfter: 1000, until: gate) { _ in Self.answer(body, chunked: chunked) }
        try await SocketlessProxy.with(origin: origin) { server in
            let connection = try await server.connect()
            try await connection.send("GET /stream HTTP/1.1\r\nHost: test\r\n\r\n")
            let early = try await Self.written(connection) { $0.contains(String(repeating: "a", count: 1000)) }
            #expect(early.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(early.contains(String(repeating: "a", count: 1000)), "the first bytes went before the rest came")
            #expect(!early.contains("ab"), "none of the rest")
            #expect(early.contains(chunked ? "Transfer-Encoding: chunked" : "Content-Length: 3000"))
            gate.open()
            let (answers, closed) = try await connection.responses(1)
            #expect(answers.first?.status == 200 && answers.first?.text == body && !closed)
            await connection.close()
        }
    }

    @Test(
        "an answer whose announced length is written frees the connection: the next request is answered before the origin's stream ends (the engine ends it once the entry is committed)"
    )
    func announcedLengthEndsTheAnswer() async throws {
        let gate = OriginGate()
        defer { gate.open() }
        let body = String(repeating: "x", count: 3000)
        let origin = Self.endingAtGate(body, gate: gate)
        try await SocketlessProxy.with(origin: origin) { server in
            let connection = try await server.connect()
            let first = try await connection.answer(to: Self.get("/first"))
            #expect(first.status == 200 && first.text == body)
            let second = try await connection.answer(to: Self.get("/second"), timeout: .seconds(30))
            #expect(second.status == 200 && second.text == body)
            #expect(origin.count("/second") == 1)
            await connection.close()
        }
    }

    @Test(
        "a client cannot run ahead of the store by more than one answer: the answer after next waits for the first body's stream to end"
    )
    func oneUnendedBodyPerConnection() async throws {
        let gate = OriginGate()
        defer { gate.open() }
        let body = String(repeating: "y", count: 2000)
        let origin = Self.endingAtGate(body, gate: gate)
        try await SocketlessProxy.with(origin: origin) { server in
            let connection = try await server.connect()
            for path in ["/first", "/second"] {
                let answer = try await connection.answer(to: Self.get(path))
                #expect(answer.status == 200 && answer.text == body)
            }
            // The second answer is written, and the connection waits for the first body's end.
            await #expect(throws: ProxyConnection.NoAnswer.self) {
                _ = try await connection.answer(to: Self.get("/third"), timeout: .milliseconds(300))
            }
            gate.open()
            let (answers, closed) = try await connection.responses(3)
            #expect(answers.count == 3 && answers.last?.text == body && !closed)
            await connection.close()
        }
    }

    @Test(
        "a body larger than one write keeps its answer until the origin's stream ends: the next request waits for it"
    )
    func largeBodyWaitsForTheEnd() async throws {
        let gate = OriginGate()
        defer { gate.open() }
        let body = String(repeating: "z", count: CachingProxy.streamedWriteSize + 1)
        let origin = Self.endingAtGate(body, gate: gate)
        try await SocketlessProxy.with(origin: origin) { server in
            let connection = try await server.connect()
            let first = try await connection.answer(to: Self.get("/large"))
            #expect(first.status == 200 && first.text == body)
            await #expect(throws: ProxyConnection.NoAnswer.self) {
                _ = try await connection.answer(to: Self.get("/next"), timeout: .milliseconds(300))
            }
            gate.open()
            let (answers, closed) = try await connection.responses(2)
            #expect(answers.count == 2 && answers.last?.status == 200 && !closed)
            await connection.close()
        }
    }

    /// The writes of "small body", arrived whole from an origin that sent it chunked or with its
    /// length, as the proxy streams it to a client speaking `version`, and the framing it chose.
    static func writesOfSmallBody(
        chunked: Bool, version: HTTPVersion, persistence: ConnectionPersistence
    ) async throws -> (framing: BodyFraming, writes: [String]) {
        try await SocketlessProxy.with { server in
            let channel = NIOAsyncTestingChannel()
            let response = ProxyResponse(
                head: Self.answer("small body", chunked: chunked).head,
                body: .arriving(ResponseBodyStream(Data("small body".utf8))))
            let framing = server.proxy.framing(of: response, method: .GET, version: version)
            await server.proxy.write(response, framing: framing, to: channel, persistence: persistence, method: .GET)
            var writes: [String] = []
            while let buffer = try await channel.readOutbound(as: ByteBuffer.self) {
                writes.append(String(buffer: buffer))
            }
            _ = try await channel.finish()
            return (framing, writes)
        }
    }

    @Test(
        "a streamed body's chunks that have arrived go out with the head in one write, with its length or chunked",
        arguments: [false, true])
    func arrivedChunksInOneWrite(chunked: Bool) async throws {
        let (_, writes) = try await Self.writesOfSmallBody(chunked: chunked, version: .http1_1, persistence: .keepAlive)
        let expectedEnd = chunked ? "\r\n\r\na\r\nsmall body\r\n" : "\r\n\r\nsmall body"
        #expect(writes.first?.hasSuffix(expectedEnd) == true, "head and body together: \(writes)")
        #expect(writes.count == (chunked ? 2 : 1), "then the last chunk of a chunked body: \(writes)")
        if chunked { #expect(writes.last == "0\r\n\r\n") }
    }

    @Test("a streamed body of unknown length goes to an HTTP/1.0 client without chunked framing, until the close")
    func unknownLengthToHTTP10() async throws {
        let (framing, writes) = try await Self.writesOfSmallBody(chunked: true, version: .http1_0, persistence: .close)
        let written = writes.joined()
        #expect(framing == .untilClose)
        #expect(written.hasSuffix("Connection: close\r\n\r\nsmall body"), "\(written)")
        #expect(!written.contains("Transfer-Encoding") && !written.contains("Content-Length"), "\(written)")
    }
}
