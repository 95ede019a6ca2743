import Foundation
import Testing
import WebCache
import WebCacheNIO
import WebCacheTestSupport

/// The pace of a download over HTTPS: the exchange handler holds its reads above TLS, so the
/// bytes the connection reads ahead of its reader are bounded as over plain HTTP, and a body given
/// up closes its connection.
extension SwiftNIOOriginTests {
    /// Runs `body` with an HTTPS origin whose test authority the client trusts.
    static func withHTTPSOrigin(
        timeout: Duration = .seconds(2), _ body: (TestOrigin, SwiftNIOOrigin) async throws -> Void
    ) async throws {
        let tls = try TestTLS()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let trust = try OriginTrust(certificateFiles: [tls.writeAuthority(into: directory.url)])
        try await withOrigin(tls: tls, trust: trust, timeout: timeout, body)
    }

    @Test("HTTPS: a body its reader is behind on is read no faster than over plain HTTP, and arrives whole")
    func httpsBackPressure() async throws {
        // The plain test shows a paused read is not silence; here only the bound matters. The
        // exchange gets 10 s a chunk: TLS in a debug build (BoringSSL unoptimised) beside the
        // rest of the suite has taken over 2 s to encrypt and decrypt this body's records.
        try await Self.withHTTPSOrigin(timeout: .seconds(10)) { origin, client in
            let body = Fixtures.patternedBytes(900_000)
            let (stream, pacing, rest) = try await Self.followedDownload(body, origin, client, sendingFirst: 1)
            rest.open()
            let (held, whole) = try await PacedReading.heldThenTaken(
                stream, of: body.count, pacing: pacing, holding: .milliseconds(600))
            #expect(held <= OriginBodyPacing.pauseAbove + (256 << 10), "\(held) bytes read without being taken")
            #expect(byteDifference(whole, body) == nil)
        }
    }

    @Test("HTTPS: a body given up while the origin sends nothing closes its connection then")
    func httpsAbandonedWhileSilent() async throws {
        try await Self.withHTTPSOrigin { origin, client in
            let (stream, pacing, rest) = try await Self.followedDownload(
                Fixtures.patternedBytes(900_000), origin, client, sendingFirst: 1000)
            var chunks = stream.body.makeAsyncIterator()
            _ = try await chunks.next()
            pacing.abandon()
            // Under the exchange's 2 s limit, which would close it anyway.
            let open = try await origin.connectionsOpen(afterWaitingAtMost: .seconds(1))
            rest.open()
            #expect(open == 0, "the connection was kept for a body nobody reads")
        }
    }
}
