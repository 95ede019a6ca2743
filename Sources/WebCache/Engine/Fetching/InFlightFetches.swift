import HTTPCaching

/// One origin fetch per key: concurrent identical requests share the first one's task.
///
/// The task is unstructured (on the caller's event loop, if any: ``CallersLoop``), so a waiter
/// that is cancelled stops waiting only for itself; the fetch (and the store it feeds)
/// completes for everyone else.
///
/// The table of fetches under way is kept under a lock, not in an actor: joining or starting a
/// fetch, and ending its joinability, are a few instructions each, where an actor made every
/// miss hop to it and back three times (each hop a job run by the caller's executor).
final class InFlightFetches<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// A fetch under way, and the number that tells it from a later fetch of the same key.
    private struct Running: Sendable {
        let number: UInt64
        let task: Task<Value, any Error>
    }

    private struct Table {
        var running: [Key: Running] = [:]
        var started: UInt64 = 0
    }

    private let table = Locked(Table())

    /// The value for `key`: runs `operation` unless a fetch for `key` is under way, in which case
    /// its result is shared. Returns whether the result was shared (`collapsed`).
    func value(
        for key: Key, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, collapsed: Bool) {
        let (fetch, joined) = joinOrStart(key) { _ in CallersLoop.task { try await operation() } }
        if joined { return (try await fetch.task.value, true) }
        defer { forget(key, ifStill: fetch.number) }
        return (try await fetch.task.value, false)
    }

    /// Like ``value(for:_:)`` for an operation that answers early and goes on working (a body
    /// still arriving): the key stays joinable until the operation calls the `release` it is
    /// given (it must, once, also when it fails after answering).
    nonisolated(nonsending) func valueKeptJoinable(
        for key: Key,
        _ operation: @escaping @Sendable (_ release: @escaping @Sendable () async -> Void) async throws -> Value
    ) async throws -> (value: Value, collapsed: Bool) {
        let (fetch, joined) = joinOrStart(key) { number in
            CallersLoop.task { [self] in try await operation { self.forget(key, ifStill: number) } }
        }
        if joined { return (try await fetch.task.value, true) }
        do {
            return (try await fetch.task.value, false)
        } catch {
            forget(key, ifStill: fetch.number)
            throw error
        }
    }

    /// The fetch under way for `key`, if any, without joining it.
    func running(for key: Key) -> Task<Value, any Error>? {
        table.withLock { $0.running[key]?.task }
    }

    /// The fetch under way for `key` (joined: `true`), or a new one `start` makes from its
    /// number, registered before anyone else can look (a task started on a busy executor may
    /// run before this returns; it then finds itself registered).
    private func joinOrStart(
        _ key: Key, start: (UInt64) -> Task<Value, any Error>
    ) -> (fetch: Running, joined: Bool) {
        table.withLock { table in
            if let running = table.running[key] { return (running, true) }
            table.started &+= 1
            let fetch = Running(number: table.started, task: start(table.started))
            table.running[key] = fetch
            return (fetch, false)
        }
    }

    private func forget(_ key: Key, ifStill number: UInt64) {
        table.withLock { table in
            if table.running[key]?.number == number { table.running[key] = nil }
        }
    }
}
