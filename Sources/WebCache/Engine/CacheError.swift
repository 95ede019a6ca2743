#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An error from ``HTTPCache``: the request could not be answered at all.
public struct CacheError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The origin is unreachable and nothing usable is stored.
        case offlineMiss
        /// The origin failed (see ``CacheError/cause``).
        case originFailed
        /// The request cannot be handled (no absolute URL, an unsupported scheme).
        case invalidRequest
        /// Too many redirects, or a redirect loop.
        case tooManyRedirects
    }

    /// What kind of failure.
    public var kind: Kind
    /// What went wrong, for people.
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, cause: (any Error)? = nil) {
        self.kind = kind
        self.message = message
        self.cause = cause
    }

    /// The message and cause.
    public var description: String { cause.map { "\(message) (\($0))" } ?? message }
}
