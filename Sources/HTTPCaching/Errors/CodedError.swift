/// The one shape of WebCache's errors: a ``code`` to match on (a struct whose static members are
/// the codes, so new ones can be added without breaking a `switch`), a ``message`` that says
/// what went wrong for people, and the underlying ``cause`` when there is one.
///
/// ```swift
/// do { _ = try await cache.response(for: request) }
/// catch let error as CacheError where error.code == .offlineMiss { showOfflineBanner() }
/// ```
public protocol CodedError: Error, Sendable, CustomStringConvertible {
    /// The kind of code this error carries.
    associatedtype Code: Hashable, Sendable, CustomStringConvertible

    /// What kind of failure this is.
    var code: Code { get }
    /// What went wrong, for people.
    var message: String { get }
    /// The error that caused this one.
    var cause: (any Error)? { get }
}

extension CodedError {
    /// The message, with the cause when there is one: `fetching https://a.test/ failed (…)`.
    public var description: String {
        cause.map { "\(message) (\($0))" } ?? message
    }
}
