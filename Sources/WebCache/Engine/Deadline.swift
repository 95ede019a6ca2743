import HTTPCaching

/// Waiting for a task with a time limit, without cancelling it when the time is up.
enum Deadline {
    /// The result of `task`, or `nil` when it has not finished within `timeout` (it goes on).
    static func result<T: Sendable>(of task: Task<T, any Error>, within timeout: Duration) async -> Result<
        T, any Error
    >? {
        let waiter = Locked<CheckedContinuation<Result<T, any Error>?, Never>?>(nil)
        let timers = Locked<Task<Void, Never>?>(nil)
        @Sendable func finish(_ value: Result<T, any Error>?) {
            guard
                let continuation = waiter.withLock({ current -> CheckedContinuation<Result<T, any Error>?, Never>? in
                    defer { current = nil }
                    return current
                })
            else { return }
            continuation.resume(returning: value)
        }
        return await withCheckedContinuation { continuation in
            waiter.withLock { $0 = continuation }
            let timer = Task {
                do {
                    try await Task.sleep(for: timeout)
                    finish(nil)
                } catch {
                    // Cancelled: the task finished first.
                }
            }
            timers.withLock { $0 = timer }
            Task {
                let result = await task.result
                timers.withLock { $0?.cancel() }
                finish(result)
            }
        }
    }
}
