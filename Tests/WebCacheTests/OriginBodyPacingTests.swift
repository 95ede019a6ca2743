import Foundation
import HTTPCaching
import NIOConcurrencyHelpers
import Testing
import WebCacheStore
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

    @Test(
        "storing stopped with one reader: the body is read once from there on, at its pace, and no other reader is let in"
    )
    func storingStoppedWithOneReader() async throws {
        let counted = Counted()
        let pacing = counted.pacing
        let body = BodyBroadcast()
        let lease = body.lease()
        for _ in 0..<4 { body.append(Self.chunk) }
        _ = try await body.take(at: 3)
        #expect(body.bytesInMemory == 4 * Self.chunk.count, "kept whole while it is being stored")
        body.storingStopped(pacing: pacing)
        #expect(body.readOnce && !body.admitsAnotherReader())
        var paused = false
        for _ in 0..<4 {
            paused = pacing.produced(Self.chunk.count)
            body.append(Self.chunk)
        }
        #expect(paused, "256 KiB handed over since storing stopped, not taken")
        _ = try await body.take(at: 7)
        #expect(body.bytesInMemory == Self.chunk.count, "the seven chunks before the one taken are let go")
        await #expect(throws: CacheError.self) { _ = try await body.chunk(at: 0) }
        body.finish()
        #expect(try await body.take(at: 8) == nil)
        #expect(counted.resumes.withLockedValue { $0 } == 1, "all it was handed since storing stopped is taken")
        #expect(body.bytesSpilled == 0)
        withExtendedLifetime(lease) {}
        #expect(counted.abandons.withLockedValue { $0 } == 0)
    }

    @Test("storing stopped on a body another reader shares: kept whole for it, the pace not followed")
    func storingStoppedWhenShared() async throws {
        let pacing = Counted().pacing
        let body = BodyBroadcast()
        #expect(body.admitsAnotherReader())
        for _ in 0..<4 { body.append(Self.chunk) }
        body.storingStopped(pacing: pacing)
        #expect(!body.readOnce)
        #expect(!pacing.produced(1 << 30))
        _ = try await body.take(at: 3)
        body.finish()
        #expect(try await body.collect().count == 4 * Self.chunk.count, "the other reader reads it from its start")
    }

    @Test("storing stopped after its reader went: the body is given up; before any reader came, it is not")
    func storingStoppedReaderGone() {
        let gone = Counted()
        let body = BodyBroadcast()
        body.append(Self.chunk)
        var lease: BodyLease? = body.lease()
        lease = nil
        body.storingStopped(pacing: gone.pacing)
        #expect(gone.abandons.withLockedValue { $0 } == 1)
        let waiting = Counted()
        let unread = BodyBroadcast()
        unread.append(Self.chunk)
        unread.storingStopped(pacing: waiting.pacing)
        #expect(waiting.abandons.withLockedValue { $0 } == 0, "its reader may come yet")
        withExtendedLifetime(lease) {}
    }

    @Test("first bytes and the end are awaited without reading a chunk, so also on a body read once")
    func arrivalsWithoutReading() async throws {
        let body = BodyBroadcast(readOnce: true)
        let lease = body.lease()
        body.append(Self.chunk)
        body.append(Self.chunk)
        _ = try await body.take(at: 1)  // the first chunk is let go
        try await body.firstBytes(2 * Self.chunk.count)
        let ended = Task { await body.ended() }
        let more = Task { try await body.firstBytes(3 * Self.chunk.count) }
        body.fail(CacheError(.originFailed, "cut"))
        await ended.value
        await #expect(throws: CacheError.self) { try await more.value }
        withExtendedLifetime(lease) {}
    }

    @Test(
        "a reader whose task is cancelled while it waits stops with CancellationError: a body read once is given up; on a shared body the other reader's wait goes on"
    )
    func cancelledWhileWaiting() async throws {
        let counted = Counted()
        let body = BodyBroadcast(readOnce: true)
        body.follow(counted.pacing)
        body.append(Self.chunk)
        let reader = Task {
            var iterator = ResponseBodyStream(source: .arriving(body)).makeAsyncIterator()
            _ = try await iterator.next()
            return try await iterator.next()  // nothing more arrives
        }
        try await Self.untilWaiting(1, body)
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
        #expect(body.waitingReaders == 0)
        #expect(counted.abandons.withLockedValue { $0 } == 1, "nothing reads the rest: the origin stops")
        // Already cancelled before it waits: it does not wait.
        let late = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await body.chunk(at: 1)
        }
        await #expect(throws: CancellationError.self) { try await late.value }

        let shared = BodyBroadcast()
        let (first, second) = (Task { try await shared.chunk(at: 0) }, Task { try await shared.chunk(at: 0) })
        try await Self.untilWaiting(2, shared)
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        shared.append(Self.chunk)
        #expect(try await second.value == Self.chunk)
    }

    /// Returns once `count` readers wait on `body` (at most 5 s).
    static func untilWaiting(_ count: Int, _ body: BodyBroadcast) async throws {
        for _ in 0..<500 where body.waitingReaders < count { try await Task.sleep(for: .milliseconds(10)) }
        try #require(body.waitingReaders == count)
    }

    @Test("a body its request will not read (a HEAD's new response): given up when not stored, or once storing stops")
    func unread() {
        let notStored = Counted()
        let body = BodyBroadcast(readOnce: true)
        body.follow(notStored.pacing)
        body.append(Self.chunk)
        body.unread()
        #expect(notStored.abandons.withLockedValue { $0 } == 1)
        let stored = Counted()
        let storing = BodyBroadcast()
        storing.append(Self.chunk)
        storing.unread()
        #expect(stored.abandons.withLockedValue { $0 } == 0, "the store reads it")
        storing.storingStopped(pacing: stored.pacing)
        #expect(stored.abandons.withLockedValue { $0 } == 1)
    }

    @Test(
        "a body kept whole holds the origin client up only while its chunks have not reached it (a store slower than the origin)"
    )
    func keptWholeFollowsItsCopy() {
        let pacing = Counted().pacing
        let body = BodyBroadcast()
        body.follow(pacing)
        let lease = body.lease()
        for _ in 0..<40 {
            #expect(!pacing.produced(Self.chunk.count), "each chunk counts as taken once it is here")
            body.append(Self.chunk)
        }
        #expect(pacing.produced(OriginBodyPacing.pauseAbove + 1), "chunks that have not reached it yet do count")
        withExtendedLifetime(lease) {}
    }

    @Test("a body read once at its reader's pace is not spilled for what the pause lets through; one not paced is")
    func pacedBodyNotSpilled() {
        let spills = NIOLockedValueBox(0)
        let spill: @Sendable () throws -> SpillFile = {
            spills.withLockedValue { $0 += 1 }
            throw CacheError(.originFailed, "no spill file in this test")
        }
        let paced = BodyBroadcast(readOnce: true)
        paced.follow(Counted().pacing)
        paced.spillWhenLarge(spill)
        let lease = paced.lease()
        for _ in 0..<6 { paced.append(Self.chunk) }  // 384 KiB: past the budget, below four times it
        #expect(spills.withLockedValue { $0 } == 0)
        let unpaced = BodyBroadcast(readOnce: true)
        unpaced.spillWhenLarge(spill)
        let reading = unpaced.lease()
        for _ in 0..<6 { unpaced.append(Self.chunk) }
        #expect(spills.withLockedValue { $0 } == 1)
        withExtendedLifetime((lease, reading)) {}
    }

    @Test("a reader that finds each chunk arrived (the proxy's writer) lets the ones before it go, and says so")
    func arrivedChunksTaken() {
        let counted = Counted()
        let pacing = counted.pacing
        let body = BodyBroadcast(readOnce: true)
        body.follow(pacing)
        let lease = body.lease()
        for _ in 0..<4 {
            _ = pacing.produced(Self.chunk.count)
            body.append(Self.chunk)
        }
        #expect(body.arrivedChunk(at: 3) == Self.chunk)
        #expect(body.bytesInMemory == Self.chunk.count)
        #expect(counted.resumes.withLockedValue { $0 } == 0, "paused at four chunks; one still not taken")
        #expect(body.arrivedChunk(at: 4) == nil)
        #expect(body.bytesInMemory == 0 && counted.resumes.withLockedValue { $0 } == 1)
        withExtendedLifetime(lease) {}
    }
}
