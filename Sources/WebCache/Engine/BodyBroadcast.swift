import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A body arriving from the origin, readable from the start by any number of requests while it
/// arrives: the requests that joined one fetch each get every chunk.
///
/// Chunks are kept until the last reader lets go, so the memory held is the body's size, the
/// same as a collected body.
final class BodyBroadcast: Sendable {
    private struct State {
        var chunks: [Data] = []
        var finished = false
        var failure: (any Error)?
        var waiting: [CheckedContinuation<Data?, any Error>] = []
    }

    private let state = Locked(State())

    /// Makes a chunk available to every reader.
    func append(_ chunk: Data) {
        let waiting = state.withLock { state in
            state.chunks.append(chunk)
            defer { state.waiting = [] }
            return state.waiting
        }
        for reader in waiting { reader.resume(returning: chunk) }
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

    /// The chunk at `index`, waiting for it if needed; `nil` past the end.
    func chunk(at index: Int) async throws -> Data? {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Data?, any Error>? = state.withLock { state in
                if index < state.chunks.count { return .success(state.chunks[index]) }
                if let failure = state.failure { return .failure(failure) }
                if state.finished { return .success(nil) }
                state.waiting.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// How many bytes have arrived so far.
    var receivedCount: Int {
        state.withLock { state in state.chunks.reduce(0) { $0 + $1.count } }
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
