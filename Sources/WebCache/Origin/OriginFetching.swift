import HTTPCaching
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Something that sends a request to the origin server and returns its answer: the network side
/// of the cache. `AsyncHTTPClientOrigin`, `SwiftNIOOrigin` (built for a proxy: it hands on
/// interim responses) and ``URLSessionOrigin`` are provided.
///
/// An origin never follows redirects itself: the cache stores each hop by its own headers.
public protocol OriginFetching: Sendable {
    /// Sends `request` (with `body`, for methods that carry one) and returns the response.
    /// Throws ``OriginError`` with code `.unreachable` when no answer came at all
    /// (refused, DNS, timeout), so that the cache can serve stale responses offline.
    func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse

    /// Sends `request` and returns once the response head has arrived, the body following as a
    /// stream, so that a large response reaches the client before it has been received whole.
    /// Throws like ``fetch(_:body:)``. The default implementation collects the body first.
    func stream(_ request: HTTPRequest, body: Data?) async throws -> OriginStream

    /// ``stream(_:body:)``, handing the interim (1xx) responses that come before the final one
    /// to `interim`, in order, before returning (a proxy passes them on, RFC 9110 §15.2). The
    /// default implementation, for origins that do not see them, drops them.
    func stream(_ request: HTTPRequest, body: Data?, interim: InterimResponseHandler?) async throws -> OriginStream

    /// ``stream(_:body:interim:)`` for a body still arriving (an upload through the proxy), sent
    /// as it comes rather than held whole. The request is sent once: a kept-alive connection
    /// that turns out closed fails it, as the body cannot be read again. `SwiftNIOOrigin` and
    /// `AsyncHTTPClientOrigin` send the body as it arrives; the default implementation, for
    /// origins that cannot (``URLSessionOrigin``), collects it first. A body whose producer fails
    /// it fails the exchange with the producer's `OriginError` (`.requestBodyTooLarge`
    /// past a limit), or with `.invalidRequest` for any other error.
    func stream(_ request: HTTPRequest, streamingBody body: RequestBodyStream, interim: InterimResponseHandler?)
        async throws -> OriginStream
}

/// Receives an origin's interim responses — `103 Early Hints`, `102 Processing` — for one
/// request. They are never stored, never replayed, and never merged into the final response.
public typealias InterimResponseHandler = @Sendable (HTTPResponse) -> Void

/// A response from the origin, with its body collected.
public struct OriginResponse: Sendable {
    /// The response head.
    public var head: HTTPResponse
    /// The body.
    public var body: Data

    /// Creates a response.
    public init(head: HTTPResponse, body: Data) {
        self.head = head
        self.body = body
    }
}

/// Why an origin fetch failed.
public struct OriginError: CodedError {
    /// The codes of this error: static members of `ErrorCode` where `Domain` is this type, declared
    /// below. More may be added.
    public typealias Code = ErrorCode<OriginError>

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong.
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?
    /// Whether no connection to the origin could be made at all (refused, name not resolved, no
    /// route, connect timeout), as opposed to a connection that failed later. Only such
    /// failures mark the origin unreachable for a while (``HTTPCache/unreachableOrigins``).
    public var connectionFailed: Bool

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil, connectionFailed: Bool = false) {
        self.code = code
        self.message = message
        self.cause = cause
        self.connectionFailed = connectionFailed && code == .unreachable
    }
}

extension ErrorCode where Domain == OriginError {
    /// No answer: connection refused, name not resolved, timed out, network down.
    public static var unreachable: Self { Self("unreachable") }
    /// The request could not be sent as given (e.g. an invalid URL).
    public static var invalidRequest: Self { Self("invalidRequest") }
    /// The request's body is larger than the most accepted: it was not sent whole (a proxy
    /// answers 413 Content Too Large).
    public static var requestBodyTooLarge: Self { Self("requestBodyTooLarge") }
    /// The answer could not be used (a body past the size limit, a broken message, a
    /// certificate that failed verification).
    public static var invalidResponse: Self { Self("invalidResponse") }
}
