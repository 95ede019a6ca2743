import NIOConcurrencyHelpers

/// Holds an ``InMemoryOrigin``'s answers (or the rest of a ``TestOrigin`` body) back until opened, so that tests of requests that overlap
/// (shared fetches, cancelled waiters) arrange the overlap instead of sleeping for it. A request
/// whose own task is cancelled while it waits stops waiting with a `CancellationError`.
public final class OriginGate: Sendable {
    private struct State {
        var open = false
        var arrived = 0
        var waiting: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var arrivalWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        var whenOpen: [@Sendable () -> Void] = []
        var nextID: UInt64 = 0

        /// Counts a request come to the gate; returns the watchers of ``arrivals(_:)`` it lets go.
        mutating func arrive() -> [CheckedContinuation<Void, Never>] {
            arrived += 1
            let reached = arrivalWatchers.filter { $0.count <= arrived }.map(\.continuation)
            arrivalWatchers.removeAll { $0.count <= arrived }
            return reached
        }
    }

    private let state = NIOLockedValueBox(State())

    /// A closed gate.
    public init() {}

    /// Lets every request through, those waiting and those to come.
    public func open() {
        let (waiting, callbacks) = state.withLockedValue { state in
            state.open = true
            defer {
                state.waiting = [:]
                state.whenOpen = []
            }
            return (Array(state.waiting.values), state.whenOpen)
        }
        for request in waiting { request.resume() }
        for callback in callbacks { callback() }
    }

    /// Comes to the gate without a task: `then` runs once it is open (at once if it is), on the
    /// thread that opens it. For an origin on an event loop, whose rest then does not wait for a
    /// cooperative thread (a test suite on two cores can keep those busy for seconds).
    func arrive(then: @escaping @Sendable () -> Void) {
        let (through, watchers) = state.withLockedValue { state in
            let reached = state.arrive()
            if !state.open { state.whenOpen.append(then) }
            return (state.open, reached)
        }
        for watcher in watchers { watcher.resume() }
        if through { then() }
    }

    /// Returns once `count` requests have come to the gate (waiting or through).
    public func arrivals(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLockedValue { state in
                if state.arrived >= count { return true }
                state.arrivalWatchers.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    /// A request comes to the gate: waits until it is open.
    func pass() async throws {
        let id = state.withLockedValue { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (through, watchers) = state.withLockedValue { state in
                    let reached = state.arrive()
                    if state.open || Task.isCancelled { return (true, reached) }
                    state.waiting[id] = continuation
                    return (false, reached)
                }
                for watcher in watchers { watcher.resume() }
                if through {
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume()
                    }
                }
            }
        } onCancel: {
            let waiting = state.withLockedValue { $0.waiting.removeValue(forKey: id) }
            waiting?.resume(throwing: CancellationError())
        }
    }
}
