import HTTPCaching

/// Back-pressure for a streamed response body: how much of it its reader has taken, so that an
/// origin client can stop reading from the network while the one reader of a body the cache
/// does not keep is behind — instead of the cache holding, or spilling to disk, what that reader
/// has not taken yet (a download passed through to a slow client).
///
/// The origin client makes one for each response it streams (``OriginStream/pacing``), saying
/// how to read again and how to give the body up, and reports each chunk it hands over
/// (``produced(_:)``), pausing its reads when told to. For a body with one reader that the
/// engine does not keep, a byte is taken when that reader takes it; for any other, when it reaches
/// the engine's copy of the body (so the client pauses only while the store is slower than the
/// origin).
public final class OriginBodyPacing: Sendable {
    private struct State {
        var following = false
        var outstanding = 0
        var paused = false
        var abandoned = false
    }

    /// Bytes handed over and not yet taken past which the client pauses its reads: below the
    /// memory an arriving body holds before it spills, so a paused body is never spilled.
    public static let pauseAbove = 192 << 10
    /// Bytes not yet taken below which a paused client reads again.
    public static let resumeBelow = 64 << 10

    private let state = Locked(State())
    private let resume: @Sendable () -> Void
    private let giveUp: @Sendable () -> Void

    /// Creates the pacing of one response body: `resume` starts the client's reads again after
    /// ``produced(_:)`` said to pause (it may be called on any thread); `abandon` stops the
    /// exchange, as nothing will read the rest (the client closes the connection).
    public init(resume: @escaping @Sendable () -> Void, abandon: @escaping @Sendable () -> Void) {
        self.resume = resume
        self.giveUp = abandon
    }

    /// The client hands over `count` bytes of the body; `true` when it should stop reading until
    /// `resume` is called.
    public func produced(_ count: Int) -> Bool {
        state.withLock { state in
            guard state.following, !state.abandoned else { return false }
            state.outstanding += count
            if state.outstanding > Self.pauseAbove { state.paused = true }
            return state.paused
        }
    }

    /// The engine follows the pace from now on: bytes handed over count until taken.
    package func follow() {
        state.withLock { $0.following = true }
    }

    /// The reader has taken `count` bytes (or they are no longer held for it).
    package func taken(_ count: Int) {
        let resuming = state.withLock { state -> Bool in
            // Bytes handed over before the engine followed are taken too: not below nothing.
            state.outstanding = max(0, state.outstanding - count)
            guard state.paused, state.outstanding < Self.resumeBelow else { return false }
            state.paused = false
            return true
        }
        if resuming { resume() }
    }

    /// Nothing will read the rest of the body: the exchange is given up (once).
    package func abandon() {
        let first = state.withLock { state -> Bool in
            defer { state.abandoned = true }
            return !state.abandoned
        }
        if first { giveUp() }
    }
}
