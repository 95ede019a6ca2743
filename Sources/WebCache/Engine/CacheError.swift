import HTTPCaching

/// An error from ``HTTPCache``: the request could not be answered at all.
public struct CacheError: CodedError {
    /// The codes of this error: static members of `ErrorCode` where `Domain` is this type, declared
    /// below. More may be added.
    public typealias Code = ErrorCode<CacheError>

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

extension ErrorCode where Domain == CacheError {
    /// The origin is unreachable and nothing usable is stored.
    public static var offlineMiss: Self { Self("offlineMiss") }
    /// The origin failed in another way (see ``CacheError/cause``, an ``OriginError``).
    public static var originFailed: Self { Self("originFailed") }
    /// The request cannot be handled (no absolute URL, an unsupported scheme).
    public static var invalidRequest: Self { Self("invalidRequest") }
    /// Too many redirects, or a redirect loop.
    public static var tooManyRedirects: Self { Self("tooManyRedirects") }
    /// The body of a response the cache does not keep was read a second time, past what it still
    /// holds: such a body is let go as it is read.
    public static var bodyAlreadyRead: Self { Self("bodyAlreadyRead") }
}
