import HTTPTypes

/// Interim (1xx) responses an origin sends before its final one — `103 Early Hints`, `102
/// Processing` — for a caller that passes them on (the proxy does, RFC 9110 §15.2). They are
/// never stored, never replayed, and never merged into the final response.
///
/// Bind a handler around the request; an origin that sees interim responses (``SwiftNIOOrigin``)
/// calls it with each, in order, before the final head is returned:
///
/// ```swift
/// let response = try await InterimResponses.$handler.withValue({ hint in send(hint) }) {
///     try await cache.response(for: request)
/// }
/// ```
///
/// The handler travels with the task (a task-local value): the fetch of a request that joins
/// another's fetch does not call it — interim responses go to the request that caused them.
public enum InterimResponses {
    /// Receives the interim responses of the origin exchanges the current task starts.
    @TaskLocal public static var handler: (@Sendable (HTTPResponse) -> Void)?
}
