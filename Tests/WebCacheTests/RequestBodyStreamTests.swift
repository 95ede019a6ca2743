import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import Testing
import WebCache

/// ``RequestBodyStream``: an upload's chunks between the client's connection and the origin's,
/// with the producer told when to stop and when to go on, and when the reader gives up.
@Suite("A request body streamed to the origin")
struct RequestBodyStreamTests {
    static func chunk(_ size: Int, _ byte: UInt8 = 0x61) -> Data { Data(repeating: byte, count: size) }

    @Test("chunks come out in order, then the end; the declared length is kept")
    func order() async throws {
        let (stream, source) = RequestBodyStream.makeStream(length: 6)
        #expect(stream.length == 6)
        source.yield(Data("abc".utf8))
        source.yield(Data("def".utf8))
        source.finish()
        #expect(try await stream.collected() == Data("abcdef".utf8))
    }

    @Test("a reader waiting for the next chunk gets it when it comes")
    func waitingReader() async throws {
        let (stream, source) = RequestBodyStream.makeStream(length: nil)
        let reading = Task { try await stream.collected() }
        try await Task.sleep(for: .milliseconds(20))
        source.yield(Data("late".utf8))
        source.finish()
        #expect(try await reading.value == Data("late".utf8))
    }

    @Test("the producer is told to stop at the high watermark, and to go on once half of it is read")
    func backPressure() async throws {
        let demands = NIOLockedValueBox(0)
        let (stream, source) = RequestBodyStream.makeStream(
            length: nil, highWatermark: 1000, onDemand: { demands.withLockedValue { $0 += 1 } })
        #expect(source.yield(Self.chunk(400)))
        #expect(source.yield(Self.chunk(400)))
        #expect(!source.yield(Self.chunk(400)), "1,200 bytes held: stop")
        var iterator = stream.makeAsyncIterator()
        _ = try await iterator.next()
        #expect(demands.withLockedValue { $0 } == 0, "800 bytes still held")
        _ = try await iterator.next()
        #expect(demands.withLockedValue { $0 } == 1, "400 held, at most half of 1,000: go on")
        _ = try await iterator.next()
        #expect(demands.withLockedValue { $0 } == 1, "told once per stop")
    }

    @Test("the producer's failure reaches the reader after the chunks before it")
    func failure() async throws {
        struct Gone: Error {}
        let (stream, source) = RequestBodyStream.makeStream(length: 10)
        source.yield(Data("abc".utf8))
        source.fail(Gone())
        var iterator = stream.makeAsyncIterator()
        #expect(try await iterator.next() == Data("abc".utf8))
        await #expect(throws: Gone.self) { try await iterator.next() }
    }

    @Test("a reader that stops tells the producer once, and what comes after is dropped")
    func readerStops() async throws {
        let terminations = NIOLockedValueBox(0)
        let (stream, source) = RequestBodyStream.makeStream(
            length: nil, onTermination: { terminations.withLockedValue { $0 += 1 } })
        source.yield(Data("abc".utf8))
        stream.cancel()
        stream.cancel()
        #expect(terminations.withLockedValue { $0 } == 1)
        #expect(source.readerStopped)
        #expect(!source.yield(Data("more".utf8)))
        var iterator = stream.makeAsyncIterator()
        await #expect(throws: CancellationError.self) { try await iterator.next() }
    }

    @Test("a reader whose task is cancelled while it waits stops, and the producer is told")
    func cancelledWhileWaiting() async throws {
        let terminated = NIOLockedValueBox(false)
        let (stream, source) = RequestBodyStream.makeStream(
            length: nil, onTermination: { terminated.withLockedValue { $0 = true } })
        let reading = Task { try await stream.collected() }
        try await Task.sleep(for: .milliseconds(20))
        reading.cancel()
        await #expect(throws: CancellationError.self) { try await reading.value }
        #expect(terminated.withLockedValue { $0 })
        #expect(!source.yield(Data("x".utf8)))
    }

    @Test("a stream that ends normally does not tell the producer the reader stopped")
    func endIsNotTermination() async throws {
        let terminated = NIOLockedValueBox(false)
        let (stream, source) = RequestBodyStream.makeStream(
            length: 1, onTermination: { terminated.withLockedValue { $0 = true } })
        source.yield(Data("a".utf8))
        source.finish()
        _ = try await stream.collected()
        stream.cancel()
        #expect(!terminated.withLockedValue { $0 })
    }

    @Test("collecting past a limit fails with the limit named, and stops the producer")
    func limit() async throws {
        let (stream, source) = RequestBodyStream.makeStream(length: nil)
        source.yield(Self.chunk(600))
        source.yield(Self.chunk(600))
        source.finish()
        await #expect {
            try await stream.collected(limit: 1000)
        } throws: { error in
            (error as? OriginError).map {
                $0.code == .requestBodyTooLarge && $0.message.contains("larger than 1000 bytes")
            }
                == true
        }
        #expect(source.readerStopped)
    }

    /// An origin that can only send a body held whole: it answers with the size it got.
    struct WholeBodyOrigin: OriginFetching {
        func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
            OriginResponse(head: HTTPResponse(status: .ok), body: Data("got \(body?.count ?? 0)".utf8))
        }
    }

    @Test("an origin that cannot stream a body collects it first, and sends it whole")
    func collectedByDefault() async throws {
        let (stream, source) = RequestBodyStream.makeStream(length: 1200)
        source.yield(Self.chunk(600))
        source.yield(Self.chunk(600))
        source.finish()
        let request = HTTPRequest(method: .post, scheme: "https", authority: "a.test", path: "/up")
        let response = try await WholeBodyOrigin().stream(request, streamingBody: stream, interim: nil).collected()
        #expect(String(decoding: response.body, as: UTF8.self) == "got 1200")
    }

    @Test("a body its producer fails fails the exchange as the request's fault, or with the producer's own OriginError")
    func producerFailureByDefault() async throws {
        struct Gone: Error {}
        let request = HTTPRequest(method: .post, scheme: "https", authority: "a.test", path: "/up")
        for (failure, code) in [
            (Gone() as any Error, OriginError.Code.invalidRequest),
            (OriginError(.requestBodyTooLarge, "past the limit"), .requestBodyTooLarge),
        ] {
            let (stream, source) = RequestBodyStream.makeStream(length: nil)
            source.yield(Self.chunk(600))
            source.fail(failure)
            await #expect {
                _ = try await WholeBodyOrigin().stream(request, streamingBody: stream, interim: nil)
            } throws: { error in
                (error as? OriginError)?.code == code
            }
        }
    }
}
