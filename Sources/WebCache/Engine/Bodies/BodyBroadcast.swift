import HTTPCaching
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A body arriving from the origin, readable from the start by any number of requests while it
/// arrives: the requests that joined one fetch each get every chunk.
///
/// At most ``memoryBudget`` of it stays in memory once the rest is on disk: in the store's file
/// for a body being stored (``keep(in:bodyStartsAt:)``, ``bodyInFile(upTo:)``), else — a body
/// not stored, or whose storing stopped (too large, a failed write) — in a ``SpillFile`` of its
/// own (``spillWhenLarge(_:)``). The oldest chunks are let go first; a reader that comes to one
/// reads it back from its file. A client that reads as fast as the origin sends costs no more
/// than the budget, whatever the size of the body.
///
/// A body only one reader takes, once (``init(readOnce:)``: a response not stored, which no
/// other request can join), lets chunks go as its reader takes them (``take(at:)``): only what it
/// has not read yet is held, and spilled past the budget; a reader as fast as the origin costs
/// neither memory nor disk; and when the origin client can pause (``follow(_:)``), one slower than
/// the origin slows the origin down instead of spilling. A body being stored becomes one read
/// once when its storing stops half-way (larger than the store's largest entry, a failed write)
/// while only its first reader reads it (``storingStopped(pacing:)``): a download of any size
/// then costs what one not stored does.
final class BodyBroadcast: Sendable {
    /// The bytes of a body kept in memory once the rest is on disk.
    static let memoryBudget = 256 << 10

    private let state: Locked<State>

    /// A body for any number of readers, or (`readOnce`) for one that reads it once.
    init(readOnce: Bool = false) {
        self.state = Locked(State(readOnce: readOnce))
    }

    /// Whether one reader takes the body, once (chunks are let go as it takes them).
    var readOnce: Bool {
        state.withLock { $0.readOnce }
    }

    /// Makes a chunk available to every reader.
    func append(_ chunk: Data) {
        let (waiting, pacing, progressed) = state.withLock { state in
            state.chunks.append(.memory(chunk))
            state.starts.append(state.received)
            state.placed.append(nil)
            state.received += chunk.count
            state.memoryBytes += chunk.count
            state.spillChunks()
            state.letGo()
            // Nobody iterating (see `leases`), or a body kept whole (its readers read the store's
            // or a spill file, not the origin): the chunk counts as taken once it is here.
            var takenAtOnce: OriginBodyPacing?
            if state.leases == 0 || !state.readOnce, let pacing = state.pacing {
                state.reportedUpTo = state.chunks.count
                takenAtOnce = pacing
            }
            defer { state.waiting = [] }
            return (state.waiting, takenAtOnce, state.progressDue())
        }
        pacing?.taken(chunk.count)
        for reader in waiting { reader.continuation.resume(returning: chunk) }
        for waiter in progressed { waiter.resume() }
    }

    /// Follows the origin client's pace. A body read once: what the reader has not taken holds
    /// up the client's reads past ``OriginBodyPacing/pauseAbove``, and a reader that goes away
    /// before the end gives the body up. Any other: what has not reached the body yet (the store
    /// is slower than the origin) holds them up, rather than piling up in memory on the way.
    func follow(_ pacing: OriginBodyPacing) {
        state.withLock { $0.pacing = pacing }
        pacing.follow()
    }

    /// Storing the body stopped before its end: unless another reader was let in
    /// (``admitsAnotherReader()``), it is read once from now on — each chunk let go once its
    /// reader has taken it, and the origin client's `pacing` (if any) followed — so that the rest
    /// of a download larger than the store's largest entry is neither held nor spilled. Nothing
    /// will read the rest when its reader has already gone: the body is given up then.
    func storingStopped(pacing: OriginBodyPacing?) {
        let (following, abandoning) = state.withLock { state -> (OriginBodyPacing?, Bool) in
            guard !state.readOnce, !state.shared else { return (nil, false) }
            state.readOnce = true
            // Chunks that came before are not the pace's to count: it starts at nothing.
            state.reportedUpTo = state.chunks.count
            state.pacing = pacing
            return (pacing, state.nobodyReadsTheRest)
        }
        following?.follow()
        if abandoning { following?.abandon() }
    }

    /// The request answered with this body does not read it (a `HEAD` whose validation brought a
    /// new response): read once, with no reader iterating, the rest is given up — nothing would
    /// read it, and nothing stores it.
    func unread() {
        let abandoning = state.withLock { state -> OriginBodyPacing? in
            state.readerCameOrWillNot = true
            return state.nobodyReadsTheRest ? state.pacing : nil
        }
        abandoning?.abandon()
    }

    /// Lets a reader other than the first read the body from its start (a request that joined
    /// the fetch, a range of the body): `false` when the body is read once (its first chunks may
    /// be gone); else it is kept whole from now on.
    func admitsAnotherReader() -> Bool {
        state.withLock { state in
            guard !state.readOnce else { return false }
            state.shared = true
            return true
        }
    }

    /// A reader starts iterating the body; it stops when the lease returned goes.
    func lease() -> BodyLease {
        state.withLock { $0.addLease() }
        return BodyLease(body: self)
    }

    /// ``lease()`` while the body is still arriving; `nil` once it has all arrived (nothing is
    /// given up then).
    func leaseWhileArriving() -> BodyLease? {
        let leased = state.withLock { state -> Bool in
            guard state.stillArriving else { return false }
            state.addLease()
            return true
        }
        return leased ? BodyLease(body: self) : nil
    }

    /// A reader stopped (``BodyLease``): once none is left before the end, nothing will take the
    /// rest, and the origin client following the pace gives it up.
    func leaseEnded() {
        let abandoning = state.withLock { state -> OriginBodyPacing? in
            state.leases -= 1
            return state.nobodyReadsTheRest ? state.pacing : nil
        }
        abandoning?.abandon()
    }

    /// The store's file `body` holds this body from byte `start` on (after a stored part's bytes
    /// that come before it): chunks it has may be let go from memory.
    func keep(in body: WrittenBody, bodyStartsAt start: Int) {
        state.withLock { state in
            guard state.storeFile == nil, state.spill == nil else { return }
            state.storeFile = (state.files.count, start)
            state.files.append(body)
        }
    }

    /// The store's file has the body's first `count` bytes: they may be let go from memory.
    func bodyInFile(upTo count: Int) {
        state.withLock { state in
            guard let file = state.storeFile, state.spill == nil else { return }
            state.inStoreFile = max(state.inStoreFile, count)
            while state.nextToPlace < state.chunks.count,
                state.starts[state.nextToPlace] + state.chunks[state.nextToPlace].count <= state.inStoreFile
            {
                state.placed[state.nextToPlace] = (file.index, file.start + state.starts[state.nextToPlace])
                state.nextToPlace += 1
            }
            state.letGo()
        }
    }

    /// The body is not going to the store's file (not stored, or storing stopped): once it
    /// outgrows the budget, the chunks not in a file yet and those that follow go to a spill file
    /// made by `make` (none if it fails: then they stay in memory).
    func spillWhenLarge(_ make: @escaping @Sendable () throws -> SpillFile) {
        state.withLock { state in
            guard state.makeSpill == nil, state.spill == nil else { return }
            state.makeSpill = make
            state.spillChunks()
            state.letGo()
        }
    }

    /// The origin's stream has ended with every byte of the body; ``finish()`` follows once it is
    /// stored (or not).
    func arrivedWhole() {
        state.withLock { $0.arrivedWhole = true }
    }

    /// Whether the whole body has arrived from the origin (it may not be stored yet).
    var hasArrivedWhole: Bool {
        state.withLock { $0.arrivedWhole }
    }

    /// Ends the body.
    func finish() {
        let (waiting, progressed) = state.withLock { state in
            state.finished = true
            defer { state.waiting = [] }
            return (state.waiting, state.progressDue())
        }
        for reader in waiting { reader.continuation.resume(returning: nil) }
        for waiter in progressed { waiter.resume() }
    }

    /// Ends the body with an error: every reader throws it once past the chunks it has.
    func fail(_ error: any Error) {
        let (waiting, progressed) = state.withLock { state in
            state.failure = error
            defer { state.waiting = [] }
            return (state.waiting, state.progressDue())
        }
        for reader in waiting { reader.continuation.resume(throwing: error) }
        for waiter in progressed { waiter.resume() }
    }

    /// Returns once `count` bytes have arrived or the body has ended (whole or not), without
    /// reading a chunk (so also for a body read once, whose chunks may be gone). Throws the body's
    /// failure when it failed before `count` bytes.
    func firstBytes(_ count: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let ready = state.withLock { state -> Bool in
                if state.received >= count || state.finished || state.failure != nil { return true }
                state.progressWaiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
        let failure = state.withLock { state in state.received < count ? state.failure : nil }
        if let failure { throw failure }
    }

    /// The chunk at `index`, waiting for it if needed; `nil` past the end. A chunk let go from
    /// memory is read back from its file, the store's or a spill file (a ``StoreError`` if that
    /// fails). A task cancelled while it waits stops waiting with a `CancellationError` (a
    /// client that went away, while the origin sends nothing).
    nonisolated(nonsending) func chunk(at index: Int) async throws -> Data? {
        // What has arrived is answered without a continuation (one allocation and a resume less
        // per chunk); only a reader ahead of the origin waits, under a number of its own.
        let (arrived, reader) = state.withLock { state -> (Ready, UInt64) in
            let ready = state.ready(at: index)
            if case .waiting = ready { state.lastWaitingReader += 1 }
            return (ready, state.lastWaitingReader)
        }
        switch arrived {
        case .result(let result): return try result.get()
        case .inFile(let file, let offset, let count): return try file.read(offset: offset, count: count)
        case .waiting: break
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Ready = state.withLock { state in
                    let ready = state.ready(at: index)
                    guard case .waiting = ready else { return ready }
                    // A cancellation that came first found nothing to resume: the flag is set
                    // before the handler runs, and the handler takes this lock.
                    if Task.isCancelled { return .result(.failure(CancellationError())) }
                    state.waiting.append((reader, continuation))
                    return ready
                }
                switch ready {
                case .result(let result): continuation.resume(with: result)
                case .inFile(let file, let offset, let count):
                    continuation.resume(with: Result { try file.read(offset: offset, count: count) })
                case .waiting: break
                }
            }
        } onCancel: {
            let cancelled = state.withLock { state in
                state.waiting.firstIndex { $0.reader == reader }.map { state.waiting.remove(at: $0).continuation }
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// The chunk at `index` for the reader that answers with the body: ``chunk(at:)``, once the
    /// chunks before it are let go when the body is read once.
    nonisolated(nonsending) func take(at index: Int) async throws -> Data? {
        let (pacing, bytes) = state.withLock { $0.takeChunks(before: index) }
        if bytes > 0 { pacing?.taken(bytes) }
        return try await chunk(at: index)
    }

    /// The chunk at `index` if it has arrived and is still in memory, without waiting: `nil`
    /// when it has not arrived, was let go to a file, or the body ended before it. For the reader
    /// that answers with the body, as ``take(at:)``: when the body is read once, the chunks
    /// before `index` are let go (a reader that finds every chunk arrived never waits, and must
    /// let them go all the same, or they would pile up and spill).
    func arrivedChunk(at index: Int) -> Data? {
        let (data, pacing, bytes) = state.withLock { state -> (Data?, OriginBodyPacing?, Int) in
            let (pacing, bytes) = state.takeChunks(before: index)
            guard index < state.chunks.count, case .memory(let data) = state.chunks[index] else {
                return (nil, pacing, bytes)
            }
            return (data, pacing, bytes)
        }
        if bytes > 0 { pacing?.taken(bytes) }
        return data
    }

    /// How many readers wait for a chunk that has not arrived (for tests).
    var waitingReaders: Int {
        state.withLock { $0.waiting.count }
    }

    /// How many bytes have arrived so far.
    var receivedCount: Int {
        state.withLock { $0.received }
    }

    /// How many bytes of the body are held in memory (for tests and measurements).
    var bytesInMemory: Int {
        state.withLock { $0.memoryBytes }
    }

    /// How many bytes of the body went to a spill file (for tests and measurements).
    var bytesSpilled: Int {
        state.withLock { $0.spilledBytes }
    }
}
