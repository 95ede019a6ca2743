import Foundation
import HTTPCaching
import NIOConcurrencyHelpers
import Testing
import WebCacheTestSupport

@testable import WebCache

/// Back-pressure for a body the cache does not keep: the origin client pauses while its one
/// reader is behind, resumes once it catches up, and gives the body up when the reader goes.
@Suite("Pacing a body read once to its reader")
struct OriginBodyPacingTests {
    /// A pacing whose resumes and abandons are counted.
    final class Counted: Sendable {
        let resumes = NIOLockedValueBox(0)
        let abandons = NIOLockedValueBox(0)
        var pacing: OriginBodyPacing {
            OriginBodyPacing(
                resume: { self.resumes.withLockedValue { $0 += 1 } },
                abandon: { self.abandons.withLockedValue { $0 += 1 } })
        }
    }

    static let chunk = Fixtures.patternedBytes(64 << 10)

    @Test("not followed, nothing counts: the client never pauses")
    func notFollowed() {
        let pacing = Counted().pacing
        #expect((0..<100).allSatisfy { _ in !pacing.produced(64 << 10) })
    }

    @Test("followed: a pause past pauseAbove bytes not taken, one resume below resumeBelow, one abandon")
    func thresholds() {
        let counted = Counted()
        let pacing = counted.pacing
        pacing.follow()
        #expect(!pacing.produced(OriginBodyPacing.pauseAbove))
        #expect(pacing.produced(1))
        pacing.taken(OriginBodyPacing.pauseAbove - OriginBodyPacing.resumeBelow)
        #expect(counted.resumes.withLockedValue { $0 } == 0, "still resumeBelow + 1 bytes not taken")
        pacing.taken(2)
        #expect(counted.resumes.withLockedValue { $0 } == 1)
        pacing.taken(1 << 20)  // bytes handed over before following: not below nothing
        #expect(!pacing.produced(OriginBodyPacing.pauseAbove))
        pacing.abandon()
        pacing.abandon()
        #expect(counted.abandons.withLockedValue { $0 } == 1)
        #expect(!pacing.produced(1 << 30), "an abandoned body does not pause")
    }

    @Test("a body nobody iterates (a HEAD, a collected body) counts each chunk as taken when it arrives")
    func noReaderNoPause() async throws {
        let pacing = Counted().pacing
        let body = BodyBroadcast(readOnce: true)
        body.follow(pacing)
        for _ in 0..<40 {
            #expect(!pacing.produced(Self.chunk.count))
            body.append(Self.chunk)
        }
        body.finish()
        #expect(try await body.collect().count == 40 * Self.chunk.count)
    }

    @Test("a reader iterating: chunks count until it takes them; it catching up resumes the client")
    func readerPaces() async throws {
        let counted = Counted()
        let pacing = counted.pacing
        let body = BodyBroadcast(readOnce: true)
        body.follow(pacing)
        let lease = body.lease()
        var paused = false
        for _ in 0..<4 {
            paused = pacing.produced(Self.chunk.count)
            body.append(Self.chunk)
        }
        #expect(paused, "256 KiB not taken")
        _ = try await body.take(at: 3)  // the first three are taken: 64 KiB left, not below it
        #expect(counted.resumes.withLockedValue { $0 } == 0)
        body.finish()
        #expect(try await body.take(at: 4) == nil)
        #expect(counted.resumes.withLockedValue { $0 } == 1)
        #expect(body.bytesSpilled == 0 && body.bytesInMemory == 0)
        withExtendedLifetime(lease) {}
        #expect(counted.abandons.withLockedValue { $0 } == 0, "the body had ended")
    }

    @Test("the last reader going before the end gives the body up, once; a body that ended is not")
    func readerGoes() {
        let counted = Counted()
        let body = BodyBroadcast(readOnce: true)
        body.follow(counted.pacing)
        body.append(Self.chunk)
        var first: BodyLease? = body.lease()
        var second: BodyLease? = body.lease()
        first = nil
        #expect(counted.abandons.withLockedValue { $0 } == 0, "a reader is left")
        second = nil
        #expect(counted.abandons.withLockedValue { $0 } == 1)
        withExtendedLifetime((first, second)) {}
    }
}
