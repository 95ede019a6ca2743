/// One origin fetch per key: concurrent identical requests share the first one's task.
///
/// The task is unstructured, so a waiter that is cancelled stops waiting only for itself; the
/// fetch (and the store it feeds) completes for everyone else.
actor InFlightFetches<Value: Sendable> {
    private var tasks: [String: Task<Value, any Error>] = [:]

    /// The value for `key`: runs `operation` unless a fetch for `key` is under way, in which case
    /// its result is shared. Returns whether the result was shared (`collapsed`).
    func value(
        for key: String, _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> (value: Value, collapsed: Bool) {
        if let running = tasks[key] {
            return (try await running.value, true)
        }
        let task = Task { try await operation() }
        tasks[key] = task
        defer { tasks[key] = nil }
        return (try await task.value, false)
    }

    /// How many fetches are under way.
    var count: Int { tasks.count }
}
