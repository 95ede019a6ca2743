/// One origin fetch per key: concurrent identical requests share the first one's task.
///
/// The task is unstructured (on the caller's event loop, if any: ``CallersLoop``), so a waiter
/// that is cancelled stops waiting only for itself; the fetch (and the store it feeds)
/// completes for everyone else.
actor InFlightFetches<Key: Hashable & Sendable, Value: Sendable> {
    private var tasks: [Key: Task<Value, any Error>] = [:]

    /// The value for `key`: runs `operation` unless a fetch for `key` is under way, in which case
    /// its result is shared. Returns whether the result was shared (`collapsed`).
    func value(
        for key: Key, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, collapsed: Bool) {
        if let running = tasks[key] {
            return (try await running.value, true)
        }
        let task = CallersLoop.task { try await operation() }
        tasks[key] = task
        defer { tasks[key] = nil }
        return (try await task.value, false)
    }

    /// Like ``value(for:_:)`` for an operation that answers early and goes on working (a body
    /// still arriving): the key stays joinable until the operation calls the `release` it is
    /// given (it must, once, also when it fails after answering).
    func valueKeptJoinable(
        for key: Key,
        _ operation: @escaping @Sendable (_ release: @escaping @Sendable () async -> Void) async throws -> Value
    ) async throws -> (value: Value, collapsed: Bool) {
        if let running = tasks[key] {
            return (try await running.value, true)
        }
        let task: Task<Value, any Error> = CallersLoop.task {
            // The task is registered under `key` before it can run (actor isolation).
            let current = await self.running(for: key)
            return try await operation { await self.forget(key, ifStill: current) }
        }
        tasks[key] = task
        do {
            return (try await task.value, false)
        } catch {
            forget(key, ifStill: task)
            throw error
        }
    }

    /// The fetch under way for `key`, if any, without joining it.
    func running(for key: Key) -> Task<Value, any Error>? {
        tasks[key]
    }

    private func forget(_ key: Key, ifStill task: Task<Value, any Error>?) {
        if let task, tasks[key] == task { tasks[key] = nil }
    }
}
