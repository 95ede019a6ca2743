/// Runs `body`, then awaits `cleanup`, whether `body` returned or threw: structured teardown for
/// servers and clients that stop asynchronously, where `defer { Task { … } }` would leave them
/// running past the end of the test.
///
/// ```swift
/// let site = try await SampleSiteServer.start()
/// try await withCleanup({ try? await site.stop() }) {
///     …
/// }
/// ```
public func withCleanup<Result>(
    _ cleanup: () async -> Void, _ body: () async throws -> Result
) async rethrows -> Result {
    do {
        let result = try await body()
        await cleanup()
        return result
    } catch {
        await cleanup()
        throw error
    }
}
