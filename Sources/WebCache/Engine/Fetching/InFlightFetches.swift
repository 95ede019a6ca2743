import HTTPCaching

/// One origin fetch per key: concurrent identical requests share the first one's task.
///
/// The task is unstructured (on the caller's event loop, if any: ``CallersLoop``), so a waiter
/// that is cancelled stops waiting only for itself; the fetch (and the store it feeds)
/// completes for everyone else.
///
/// A lock guards the table rather than an actor: every miss asks it twice and its fetch once
/// more, and each visit to an actor is a job on the caller's event loop and another back.
final class InFlightFetches<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// A fetch under way, with the number that tells it from a later one for the same key.
    private struct Running {
        var number: UInt64
        var task: Task<Value, any Error>
    }

    private let table = Locked<(started: UInt64, running: [Key: Running])>((0, [:]))

    /// The value for `key`: runs `operation` unless a fetch for `key` is under way, in which case
    /// its result is shared. Returns whether the result was shared (`collapsed`).
    func value(
        for key: Key, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, collapsed: Bool) {
        let (running, joined) = join(key) { _ in CallersLoop.task { try await operation() } }
        if joined { return (try await running.task.value, true) }
        defer { forget(key, number: running.number) }
        return (try await running.task.value, false)
    }

    /// Like ``value(for:_:)`` for an operation that answers early and goes on working (a body
    /// still arriving): the key stays joinable until the operation calls the `release` it is
    /// given (it must, once, also when it fails after answering).
    func valueKeptJoinable(
        for key: Key,
        _ operation: @escaping @Sendable (_ release: @escaping @Sendable () async -> Void) async throws -> Value
    ) async throws -> (value: Value, collapsed: Bool) {
        let (running, joined) = join(key) { number in
            CallersLoop.task { try await operation { self.forget(key, number: number) } }
        }
        if joined { return (try await running.task.value, true) }
        do {
            return (try await running.task.value, false)
        } catch {
            forget(key, number: running.number)
            throw error
        }
    }

    /// The fetch under way for `key`, if any, without joining it.
    func running(for key: Key) -> Task<Value, any Error>? {
        table.withLock { $0.running[key]?.task }
    }

    /// The fetch under way for `key` (`joined`), or a new one that `start` begins, given its
    /// number. Started under the lock, so that two first requests cannot both start one.
    private func join(
        _ key: Key, orStart start: (UInt64) -> Task<Value, any Error>
    ) -> (running: Running, joined: Bool) {
        table.withLock { table in
            if let running = table.running[key] { return (running, true) }
            table.started &+= 1
            let running = Running(number: table.started, task: start(table.started))
            table.running[key] = running
            return (running, false)
        }
    }

    /// Forgets the fetch for `key` if it is still the one numbered `number`.
    private func forget(_ key: Key, number: UInt64) {
        table.withLock { table in
            if table.running[key]?.number == number { table.running[key] = nil }
        }
    }
}
