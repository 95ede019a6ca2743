import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A body arriving from the origin, readable from the start by any number of requests while it
/// arrives: the requests that joined one fetch each get every chunk.
///
/// Chunks stay in memory until the last reader lets go — except, for a body the store is
/// writing to a file, the oldest chunks beyond ``memoryBudget``: once the file has them
/// (``keep(in:bodyStartsAt:)``, ``bodyInFile(upTo:)``) they are let go and a reader that comes to
/// them reads them back from the file. A client that reads as fast as the origin sends costs
/// no more than the budget, whatever the size of the body; one that falls behind reads from
/// the page cache. A body that is not stored is held whole.
final class BodyBroadcast: Sendable {
    /// The bytes of a stored body kept in memory once the file has them.
    static let memoryBudget = 256 << 10

    private enum Chunk {
        case memory(Data)
        case inFile(offset: Int, count: Int)

        var count: Int {
            switch self {
            case .memory(let data): data.count
            case .inFile(_, let count): count
            }
        }
    }

    private struct State {
        var chunks: [Chunk] = []
        /// Where each chunk starts in the body.
        var starts: [Int] = []
        var received = 0
        var memoryBytes = 0
        /// The store's file with the body, and where the body starts in it.
        var file: (body: WrittenBody, start: Int)?
        /// How many bytes of the body, from its start, the file holds.
        var inFile = 0
        /// The first chunk that may still be in memory.
        var nextToLetGo = 0
        var finished = false
        var failure: (any Error)?
        var waiting: [CheckedContinuation<Data?, any Error>] = []
    }

    private let state = Locked(State())

    /// Makes a chunk available to every reader.
    func append(_ chunk: Data) {
        let waiting = state.withLock { state in
            state.chunks.append(.memory(chunk))
            state.starts.append(state.received)
            state.received += chunk.count
            state.memoryBytes += chunk.count
            defer { state.waiting = [] }
            return state.waiting
        }
        for reader in waiting { reader.resume(returning: chunk) }
    }

    /// The store's file `body` holds this body from byte `start` on (after a stored part's bytes
    /// that come before it): chunks it has may be let go from memory.
    func keep(in body: WrittenBody, bodyStartsAt start: Int) {
        state.withLock { state in
            if state.file == nil { state.file = (body, start) }
        }
    }

    /// The file has the body's first `count` bytes: lets the oldest of them go from memory while
    /// more than ``memoryBudget`` is held.
    func bodyInFile(upTo count: Int) {
        state.withLock { state in
            guard let file = state.file else { return }
            state.inFile = max(state.inFile, count)
            while state.memoryBytes > Self.memoryBudget, state.nextToLetGo < state.chunks.count {
                let index = state.nextToLetGo
                let size = state.chunks[index].count
                guard state.starts[index] + size <= state.inFile else { break }
                if case .memory = state.chunks[index] {
                    state.chunks[index] = .inFile(offset: file.start + state.starts[index], count: size)
                    state.memoryBytes -= size
                }
                state.nextToLetGo += 1
            }
        }
    }

    /// Ends the body.
    func finish() {
        let waiting = state.withLock { state in
            state.finished = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for reader in waiting { reader.resume(returning: nil) }
    }

    /// Ends the body with an error: every reader throws it once past the chunks it has.
    func fail(_ error: any Error) {
        let waiting = state.withLock { state in
            state.failure = error
            defer { state.waiting = [] }
            return state.waiting
        }
        for reader in waiting { reader.resume(throwing: error) }
    }

    /// The chunk at `index`, waiting for it if needed; `nil` past the end. A chunk let go from
    /// memory is read back from the store's file (a ``StoreError`` if that fails).
    func chunk(at index: Int) async throws -> Data? {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Ready = state.withLock { state in
                if index < state.chunks.count {
                    switch state.chunks[index] {
                    case .memory(let data): return .result(.success(data))
                    case .inFile(let offset, let count):
                        guard let file = state.file else { return .result(.failure(StoreError(.ioFailure, "a body chunk is gone"))) }
                        return .inFile(file.body, offset: offset, count: count)
                    }
                }
                if let failure = state.failure { return .result(.failure(failure)) }
                if state.finished { return .result(.success(nil)) }
                state.waiting.append(continuation)
                return .waiting
            }
            switch ready {
            case .result(let result): continuation.resume(with: result)
            case .inFile(let file, let offset, let count): continuation.resume(with: Result { try file.read(offset: offset, count: count) })
            case .waiting: break
            }
        }
    }

    private enum Ready {
        case result(Result<Data?, any Error>)
        case inFile(WrittenBody, offset: Int, count: Int)
        case waiting
    }

    /// How many bytes have arrived so far.
    var receivedCount: Int {
        state.withLock { $0.received }
    }

    /// How many bytes of the body are held in memory (for tests and measurements).
    var bytesInMemory: Int {
        state.withLock { $0.memoryBytes }
    }

    /// The bytes `range` of this body, as another broadcast that follows this one as it arrives.
    func slice(_ range: Range<Int>) -> BodyBroadcast {
        let slice = BodyBroadcast()
        CallersLoop.task { [self] in
            var position = 0
            var index = 0
            do {
                while position < range.upperBound, let chunk = try await chunk(at: index) {
                    let chunkRange = position..<(position + chunk.count)
                    let wanted = chunkRange.clamped(to: range)
                    if !wanted.isEmpty {
                        let start = chunk.startIndex + (wanted.lowerBound - position)
                        slice.append(chunk[start..<(start + wanted.count)])
                    }
                    position += chunk.count
                    index += 1
                }
                if position < range.upperBound {
                    slice.fail(CacheError(.originFailed, "the body ended after \(position) bytes, before the range \(range) was whole"))
                } else {
                    slice.finish()
                }
            } catch {
                slice.fail(error)
            }
        }
        return slice
    }

    /// Returns once the body has ended, whole or not (then the store has what it will keep).
    func ended() async {
        var index = 0
        while (try? await chunk(at: index)) != nil { index += 1 }
    }

    /// The whole body, once it has arrived.
    func collect() async throws -> Data {
        var body = Data()
        var index = 0
        while let chunk = try await chunk(at: index) {
            body.append(chunk)
            index += 1
        }
        return body
    }
}
