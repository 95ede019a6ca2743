import Foundation
import HTTPTypes
import Testing
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheNIO
import WebCacheTestSupport

/// `stream(_:streamingBody:interim:)` of both origins built on SwiftNIO: a request body sent as it
/// arrives, against real origins on 127.0.0.1.
@Suite("Origins: request bodies sent as they arrive", .serialized)
struct StreamedUploadTests {
    /// The origins that send a body as it arrives.
    enum Client: String, CaseIterable, CustomTestStringConvertible {
        case swiftNIO = "SwiftNIOOrigin"
        case asyncHTTPClient = "AsyncHTTPClientOrigin"

        var testDescription: String { rawValue }

        /// A new client of this kind, and how to shut it down.
        func make() throws -> (origin: any OriginFetching, shutdown: @Sendable () async throws -> Void) {
            switch self {
            case .swiftNIO:
                let origin = try SwiftNIOOrigin(timeout: .seconds(10))
                return (origin, { try await origin.shutdown() })
            case .asyncHTTPClient:
                let origin = AsyncHTTPClientOrigin(connectTimeout: .seconds(10), timeout: .seconds(10))
                return (origin, { try await origin.shutdown() })
            }
        }
    }

    static let body = Fixtures.bytes(3_000_000) { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) }

    /// `data` put into a new stream 64 KiB at a time by a task, waiting whenever the stream says
    /// to, as the proxy's connection does.
    static func produce(_ data: Data, length: Int?) -> RequestBodyStream {
        let demand = AsyncStream<Void>.makeStream()
        let (stream, source) = RequestBodyStream.makeStream(
            length: length, onDemand: { demand.continuation.yield() },
            onTermination: { demand.continuation.finish() })
        Task {
            var demands = demand.stream.makeAsyncIterator()
            for start in stride(from: 0, to: data.count, by: 65_536) {
                if !source.yield(data[start..<min(start + 65_536, data.count)]) {
                    if source.readerStopped { return }
                    await demands.next()
                }
            }
            source.finish()
        }
        return stream
    }

    static func upload(_ origin: TestOrigin, with kind: Client, length: Int?) async throws -> (
        OriginResponse, TestOrigin.Request?
    ) {
        origin.route("/up") { request in .text("got \(request.body.count)") }
        let (client, shutdown) = try kind.make()
        let request = Fixtures.request(.post, origin.url("/up").absoluteString, [])
        let response: OriginResponse
        do {
            response = try await client.stream(
                request, streamingBody: Self.produce(Self.body, length: length), interim: nil
            ).collected()
        } catch {
            try? await shutdown()
            throw error
        }
        try await shutdown()
        return (response, origin.requests(to: "/up").first)
    }

    @Test("a body of declared length goes out with Content-Length, byte for byte", arguments: Client.allCases)
    func declaredLength(_ kind: Client) async throws {
        try await TestOrigin.with { origin in
            let (response, received) = try await Self.upload(origin, with: kind, length: Self.body.count)
            #expect(String(decoding: response.body, as: UTF8.self) == "got 3000000")
            #expect(received?.header("Content-Length") == "3000000")
            #expect(received?.header("Transfer-Encoding") == nil)
            #expect(received.map { byteDifference($0.body, Self.body) == nil } == true)
        }
    }

    @Test("a body of unknown length goes out chunked, byte for byte", arguments: Client.allCases)
    func chunked(_ kind: Client) async throws {
        try await TestOrigin.with { origin in
            let (response, received) = try await Self.upload(origin, with: kind, length: nil)
            #expect(String(decoding: response.body, as: UTF8.self) == "got 3000000")
            #expect(received?.header("Transfer-Encoding") == "chunked")
            #expect(received.map { byteDifference($0.body, Self.body) == nil } == true)
        }
    }

    @Test(
        "the origin gets the body while it is still arriving; its early answer comes through and stops the body",
        arguments: Client.allCases)
    func earlyAnswer(_ kind: Client) async throws {
        let origin = EarlyAnswerOrigin(
            answerAfter: 1_000_000,
            response: "HTTP/1.1 413 Content Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo much")
        try await origin.start()
        let (client, shutdown) = try kind.make()
        do {
            // 1.5 MB now; the rest never comes unless asked for.
            let (stream, source) = RequestBodyStream.makeStream(length: 10_000_000)
            for _ in 0..<24 { source.yield(Data(count: 65_536)) }
            let request = Fixtures.request(.put, origin.url("/up").absoluteString, [])
            let response = try await client.stream(request, streamingBody: stream, interim: nil).collected()
            #expect(response.head.status.code == 413)
            #expect(String(decoding: response.body, as: UTF8.self) == "too much")
            #expect(origin.bytesReceived >= 1_000_000, "the body went out before it had all come")
            let deadline = ContinuousClock.now + .seconds(10)
            while !source.readerStopped && ContinuousClock.now < deadline {
                source.yield(Data(count: 1024))
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(source.readerStopped, "the producer is told to stop")
        } catch {
            Issue.record(error)
        }
        try await shutdown()
        try await origin.stop()
    }

    @Test(
        "a body whose client goes away fails the exchange as the request's fault, and the request is not sent again",
        arguments: Client.allCases)
    func producerFails(_ kind: Client) async throws {
        struct ClientWentAway: Error {}
        try await TestOrigin.with { origin in
            origin.route("/up") { request in .text("got \(request.body.count)") }
            let (client, shutdown) = try kind.make()
            let (stream, source) = RequestBodyStream.makeStream(length: 1_000_000)
            source.yield(Data(count: 100_000))
            let request = Fixtures.request(.post, origin.url("/up").absoluteString, [])
            Task {
                try await Task.sleep(for: .milliseconds(50))
                source.fail(ClientWentAway())
            }
            let error = await #expect(throws: OriginError.self) {
                _ = try await client.stream(request, streamingBody: stream, interim: nil).collected()
            }
            #expect(error?.code == .invalidRequest, "\(String(describing: error))")
            #expect(error?.message.contains("did not arrive whole") == true, "\(String(describing: error))")
            #expect(origin.count("/up") == 0, "no request reached the origin whole")
            try await shutdown()
        }
    }
}
