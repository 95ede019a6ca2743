import HTTPCaching

/// Where a streamed body's pump waits while its reader is behind (`OriginBodyPacing`
/// said to pause): it reads the next chunk from AsyncHTTPClient — which then reads from the
/// connection — only once the pacing resumes it, or stops when the body is given up.
///
/// Resumes are counted, so that one that comes between the pacing saying "pause" and the pump
/// starting to wait is not lost: the pump notes the count before it hands a chunk over and waits
/// for a later one.
final class BodyReadGate: Sendable {
    private struct State {
        var resumes = 0
        var abandoned = false
        var waiting: CheckedContinuation<Void, any Error>?
        /// The pump, cancelled when the body is given up (``cancelOnAbandon(_:)``).
        var pump: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// Resumes handed out so far: note it before handing a chunk over that may pause the pump.
    var resumes: Int { state.withLock { $0.resumes } }

    /// Whether the body was given up (its reader went away).
    var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// The pacing resumed the reads: a pump waiting goes on.
    func resume() {
        let waiting = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.resumes += 1
            defer { state.waiting = nil }
            return state.waiting
        }
        waiting?.resume()
    }

    /// The body is given up: a pump waiting stops with `CancellationError`, as does the next wait,
    /// and the pump's task is cancelled (one waiting for AsyncHTTPClient's next bytes, from an
    /// origin that sends nothing, stops then; AsyncHTTPClient closes the connection).
    func abandon() {
        let (waiting, pump) = state.withLock { state in
            state.abandoned = true
            defer { state.waiting = nil }
            return (state.waiting, state.pump)
        }
        waiting?.resume(throwing: CancellationError())
        pump?.cancel()
    }

    /// Cancels `pump` when the body is given up, at once if it already is.
    func cancelOnAbandon(_ pump: Task<Void, Never>) {
        let abandoned = state.withLock { state in
            state.pump = pump
            return state.abandoned
        }
        if abandoned { pump.cancel() }
    }

    /// Returns once there have been more than `seen` resumes; throws `CancellationError` once the
    /// body is given up.
    func waitForResume(after seen: Int) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if state.abandoned { return .failure(CancellationError()) }
                if state.resumes > seen { return .success(()) }
                state.waiting = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}
