import HTTPCaching

/// An error from ``HTTPCache``: the request could not be answered at all.
public struct CacheError: CodedError {
    /// What kind of failure this is. New codes may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case offlineMiss, originFailed, invalidRequest, tooManyRedirects
        }
        private let value: Value

        /// The origin is unreachable and nothing usable is stored.
        public static let offlineMiss = Code(value: .offlineMiss)
        /// The origin failed in another way (see ``CacheError/cause``, an ``OriginError``).
        public static let originFailed = Code(value: .originFailed)
        /// The request cannot be handled (no absolute URL, an unsupported scheme).
        public static let invalidRequest = Code(value: .invalidRequest)
        /// Too many redirects, or a redirect loop.
        public static let tooManyRedirects = Code(value: .tooManyRedirects)

        /// The code's name.
        public var description: String { "\(value)" }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, for people.
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }
}
