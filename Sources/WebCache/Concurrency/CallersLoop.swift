import HTTPCaching

/// Starts a task on the executor its caller's thread belongs to, if that thread belongs to one
/// (an event loop), else as an ordinary task. A module that runs requests on event loops
/// installs one with ``CallersLoop/install(_:)``.
package protocol CallerTaskStarting: Sendable {
    /// `operation` as a task that prefers the caller's executor, or an ordinary task when the
    /// caller is on no such thread.
    func task<Success: Sendable>(
        _ operation: sending @escaping @isolated(any) () async throws -> Success
    ) -> Task<Success, any Error>
}

/// Unstructured tasks of the engine (a shared fetch, a body pumped into the store) that stay on
/// the caller's thread when the caller runs on an event loop (a proxy connection): its origin
/// connection is then made on that loop too, and the body goes from the origin to the client
/// without a thread hop. Anywhere else — and always, unless an event-loop module
/// (WebCacheNIO) has installed itself — they are ordinary tasks, so the engine needs no
/// event-loop library of its own.
///
/// Within such a task, the engine's (and the proxy's) internal async functions on a request's
/// path — `fetchAndRespond`, `streamedFetch`, `pumpBody`, a body's `take(at:)` and others — are
/// `nonisolated(nonsending)`: they run on their caller's executor, so calling one is a call,
/// where a plain nonisolated async function checks for a switch of executor on the way in and
/// out (`swift_task_switch`: 52 calls a stored miss before, 29 after). The public entry points
/// stay plain nonisolated, so an app calling from the main actor still leaves it.
package enum CallersLoop {
    private static let starter = Locked<(any CallerTaskStarting)?>(nil)

    /// Makes `starter` the way the engine's tasks find their caller's executor, for the whole
    /// process. Installing the same kind again changes nothing.
    package static func install(_ starter: any CallerTaskStarting) {
        self.starter.withLock { $0 = starter }
    }

    /// Starts `operation` on the caller's event loop, if it runs on one.
    @discardableResult
    static func task<Success: Sendable>(
        _ operation: sending @escaping @isolated(any) () async throws -> Success
    ) -> Task<Success, any Error> {
        guard let starter = starter.withLock({ $0 }) else { return Task(operation: operation) }
        return starter.task(operation)
    }
}
