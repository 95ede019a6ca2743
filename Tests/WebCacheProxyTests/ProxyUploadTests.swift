import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing
import WebCache
import WebCacheProxy
import WebCacheStore
import WebCacheTestSupport

/// Request bodies from `ProxyConfiguration.streamsRequestBodiesFrom` on go to the origin as they
/// arrive (here from 1,000 bytes, with 1,000 bytes of budget for bodies held whole): never held,
/// never counted against the budget, the client's connection closed when the answer comes before
/// the body ends.
@Suite("The caching proxy: large request bodies stream to the origin")
struct ProxyUploadTests {
    /// An origin that says how each body reached it: held whole (`fetch`), or as a stream that it
    /// reads (`collect`) or answers without reading (`answerAtOnce`).
    final class UploadOrigin: OriginFetching {
        enum Behaviour: Sendable {
            case collect
            case answerAtOnce(status: Int)
        }

        let behaviour: Behaviour
        /// Path, how the body came ("held" or "streamed"), and the body.
        let received = NIOLockedValueBox([(path: String, how: String, body: Data)]())
        /// The errors streamed bodies ended with.
        let failures = NIOLockedValueBox([String]())

        init(_ behaviour: Behaviour = .collect) {
            self.behaviour = behaviour
        }

        func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
            received.withLockedValue { $0.append((request.path ?? "", "held", body ?? Data())) }
            return Self.answer(200, "held \(body?.count ?? 0)")
        }

        func stream(_ request: HTTPRequest, streamingBody body: RequestBodyStream, interim: InterimResponseHandler?)
            async throws -> OriginStream
        {
            switch behaviour {
            case .answerAtOnce(let status):
                received.withLockedValue { $0.append((request.path ?? "", "streamed", Data())) }
                return OriginStream(Self.answer(status, "answered before the body"))
            case .collect:
                do {
                    let data = try await body.collected()
                    received.withLockedValue { $0.append((request.path ?? "", "streamed", data)) }
                    return OriginStream(Self.answer(200, "streamed \(data.count) of \(body.length ?? -1)"))
                } catch {
                    failures.withLockedValue { $0.append("\(error)") }
                    throw error
                }
            }
        }

        static func answer(_ status: Int, _ text: String) -> OriginResponse {
            var head = HTTPResponse(status: .init(code: status))
            head.headerFields[.cacheControl] = "no-store"
            return OriginResponse(head: head, body: Data(text.utf8))
        }
    }

    static func with(
        _ origin: UploadOrigin, limit: Int = .max, _ body: (CachingProxy) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory(prefix: "webcache-uploads")
        defer { directory.remove() }
        let cache = try HTTPCache(
            configuration: .init(store: CacheStore.Configuration(directory: directory.url), rules: .shared),
            origin: origin)
        var configuration = ProxyConfiguration(port: 0, upstream: URL(string: "http://origin.test/"))
        configuration.streamsRequestBodiesFrom = 1000
        configuration.maximumBufferedRequestBodies = 1000
        configuration.maximumRequestBodySize = limit
        try await body(CachingProxy(cache: cache, configuration: configuration))
        await cache.waitForBackgroundWork()
    }

    static func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) } }

    @Test("a body declaring 1,000 bytes or more streams whole to the origin, past the budget; the connection goes on")
    func declaredLength() async throws {
        let origin = UploadOrigin()
        try await Self.with(origin) { proxy in
            let connection = try await ProxyConnection.open(to: proxy)
            let body = Self.bytes(5000)
            try await connection.send("POST /up HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 5000\r\n\r\n")
            for piece in stride(from: 0, to: body.count, by: 700) {
                try await connection.send(Array(body[piece..<min(piece + 700, body.count)]))
            }
            let (answers, closed) = try await connection.responses(1, methods: ["POST"])
            #expect(answers.first?.text == "streamed 5000 of 5000")
            #expect(!closed)
            let next = try await connection.answer(
                to: "POST /small HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 3\r\n\r\nabc")
            #expect(next.text == "held 3", "a small body is held whole, as before")
            let received = origin.received.withLockedValue { $0 }
            #expect(received.map(\.how) == ["streamed", "held"])
            #expect(received.first?.body == Data(body))
            await connection.close()
        }
    }

    @Test("a chunked body streams once 1,000 bytes of it have come, the bytes before included")
    func chunked() async throws {
        let origin = UploadOrigin()
        try await Self.with(origin) { proxy in
            let connection = try await ProxyConnection.open(to: proxy)
            let body = Self.bytes(1800)
            try await connection.send("PUT /up HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n")
            for piece in stride(from: 0, to: body.count, by: 600) {
                try await connection.send(Array("258\r\n".utf8) + Array(body[piece..<piece + 600]) + Array("\r\n".utf8))
            }
            try await connection.send("0\r\n\r\n")
            let (answers, _) = try await connection.responses(1, methods: ["PUT"])
            #expect(answers.first?.text == "streamed 1800 of -1")
            #expect(origin.received.withLockedValue { $0.first?.body } == Data(body))
            await connection.close()
        }
    }

    @Test("an answer that comes before the body has all arrived is written, and the connection closes")
    func answeredEarly() async throws {
        let origin = UploadOrigin(.answerAtOnce(status: 413))
        try await Self.with(origin) { proxy in
            let connection = try await ProxyConnection.open(to: proxy)
            try await connection.send("POST /up HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 100000\r\n\r\n")
            try await connection.send(Self.bytes(2000))
            let (answers, closed) = try await connection.responses(1, methods: ["POST"])
            #expect(answers.map(\.status) == [413])
            #expect(answers.first?.text == "answered before the body")
            #expect(closed, "the rest of the body is not read as the next request")
        }
    }

    @Test("a client that goes before its body ends fails the exchange with the origin")
    func clientGoes() async throws {
        let origin = UploadOrigin()
        try await Self.with(origin) { proxy in
            let connection = try await ProxyConnection.open(to: proxy)
            try await connection.send("POST /up HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 100000\r\n\r\n")
            try await connection.send(Self.bytes(2000))
            await connection.settle()
            await connection.close()
            let deadline = ContinuousClock.now + .seconds(10)
            while origin.failures.withLockedValue({ $0.isEmpty }) && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(origin.failures.withLockedValue { $0 }.first?.contains("closed its connection") == true)
            #expect(origin.received.withLockedValue { $0.isEmpty })
        }
    }

    @Test(
        "a chunked body that passes the largest accepted fails its exchange; nothing past the limit reaches the origin")
    func chunkedPastTheLimit() async throws {
        let origin = UploadOrigin()
        try await Self.with(origin, limit: 3000) { proxy in
            let connection = try await ProxyConnection.open(to: proxy)
            try await connection.send("POST /up HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n")
            for _ in 0..<5 {
                try await connection.send(Array("3e8\r\n".utf8) + Self.bytes(1000) + Array("\r\n".utf8))
            }
            try await connection.send("0\r\n\r\n")
            let (answers, _) = try await connection.responses(1, methods: ["POST"])
            #expect(answers.first?.status == 413)
            #expect(origin.failures.withLockedValue { $0 }.first?.contains("larger than 3000 bytes") == true)
            #expect(origin.received.withLockedValue { $0.isEmpty })
            await connection.close()
        }
    }

    @Test("a GET body larger than all the memory for bodies held whole is refused with 413, not asked to try again")
    func getBodyThatCannotFit() async throws {
        try await Self.with(UploadOrigin()) { proxy in
            let connection = try await ProxyConnection.open(to: proxy)
            try await connection.send("GET /q HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 5000\r\n\r\n")
            try await connection.send(Self.bytes(5000))
            let (answers, closed) = try await connection.responses(1)
            #expect(answers.map(\.status) == [413])
            #expect(closed)
        }
    }
}
