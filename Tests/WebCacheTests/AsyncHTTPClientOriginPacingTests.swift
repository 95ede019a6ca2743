import Foundation
import Testing
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheTestSupport

/// AsyncHTTPClientOrigin reads a streamed body only as fast as the engine's reader takes it, when
/// the engine follows its pace, and gives it up (closing the connection) when told to.
@Suite("AsyncHTTPClientOrigin: a streamed body at its reader's pace", .serialized)
struct AsyncHTTPClientOriginPacingTests {
    /// A 900 KB `no-store` download from `/large`: its first byte at once, the rest once the gate
    /// returned opens; streamed with its pace followed.
    static func followedDownload(_ origin: TestOrigin, _ client: AsyncHTTPClientOrigin, body: Data) async throws
        -> (OriginStream, OriginBodyPacing, OriginGate)
    {
        let rest = OriginGate()
        origin.route("/large") { _ in
            var response = TestOrigin.Response(headers: [("Cache-Control", "no-store")], body: body)
            response.pauseAfter = 1
            response.pauseUntil = rest
            return response
        }
        let stream = try await client.stream(Fixtures.request(.get, origin.url("/large").absoluteString), body: nil)
        let pacing = try #require(stream.pacing)
        pacing.follow()
        return (stream, pacing, rest)
    }

    @Test("past pauseAbove bytes not taken no more is read; taking them lets the rest come, whole")
    func backPressure() async throws {
        try await TestOrigin.with { origin in
            let client = AsyncHTTPClientOrigin(connectTimeout: .seconds(10), timeout: .seconds(10))
            let body = Fixtures.patternedBytes(900_000)
            let (stream, pacing, rest) = try await Self.followedDownload(origin, client, body: body)
            rest.open()
            let (held, whole) = try await PacedReading.heldThenTaken(
                stream, of: body.count, pacing: pacing, holding: .milliseconds(300))
            #expect(held <= OriginBodyPacing.pauseAbove + (128 << 10), "\(held) bytes read without being taken")
            #expect(byteDifference(whole, body) == nil)
            try await client.shutdown()
        }
    }

    @Test("a body given up ends in an error, and its connection is closed")
    func abandoned() async throws {
        try await TestOrigin.with { origin in
            let client = AsyncHTTPClientOrigin(connectTimeout: .seconds(10), timeout: .seconds(10))
            let (stream, pacing, rest) = try await Self.followedDownload(
                origin, client, body: Fixtures.patternedBytes(900_000))
            pacing.abandon()
            rest.open()
            await #expect(throws: (any Error).self) {
                for try await _ in stream.body {}
            }
            let open = try await origin.connectionsOpen(afterWaitingAtMost: .seconds(2))
            #expect(open == 0, "the connection was kept for a body nobody reads")
            try await client.shutdown()
        }
    }

    @Test(
        "a body given up while the origin sends nothing: its connection is closed then, not at the origin's next bytes"
    )
    func abandonedWhileSilent() async throws {
        try await TestOrigin.with { origin in
            let client = AsyncHTTPClientOrigin(connectTimeout: .seconds(10), timeout: .seconds(10))
            let (stream, pacing, rest) = try await Self.followedDownload(
                origin, client, body: Fixtures.patternedBytes(900_000))
            var chunks = stream.body.makeAsyncIterator()
            _ = try await chunks.next()  // the first byte; the rest is held
            pacing.abandon()
            let open = try await origin.connectionsOpen(afterWaitingAtMost: .seconds(2))
            rest.open()
            #expect(open == 0, "the connection was kept until the origin sent more")
            await #expect(throws: (any Error).self) {
                while try await chunks.next() != nil {}
            }
            try await client.shutdown()
        }
    }
}
