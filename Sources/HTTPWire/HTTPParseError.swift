/// Why bytes are not an HTTP/1.1 message the proxy takes. For a request from a client, with the
/// status of the refusal that says so (the connection closes after it); a response from an
/// origin that is not one becomes a 502 whatever the status here.
package struct HTTPParseError: Error, Equatable, CustomStringConvertible {
    /// The refusal's status, for a request: 400, 431, 501 or 505.
    package let status: Int
    /// What was wrong, for the log.
    package let reason: String

    package var description: String { "\(status): \(reason)" }

    /// Bytes that are not an HTTP/1.1 message, or one framed ambiguously (400).
    package static func malformed(_ reason: String) -> Self { Self(status: 400, reason: reason) }

    /// A head or trailer section longer than the limit, or with more fields than it (431, RFC
    /// 6585 §5).
    package static func headTooLarge(_ reason: String) -> Self { Self(status: 431, reason: reason) }

    /// A request line whose method the proxy does not implement (501, RFC 9110 §9.1).
    package static func unknownMethod(_ method: String) -> Self {
        Self(status: 501, reason: "the method \(method) is not implemented")
    }

    /// A request body in a transfer coding other than chunked (501, RFC 9112 §6.1).
    package static let unknownTransferCoding = Self(
        status: 501, reason: "a transfer coding other than chunked is not implemented")

    /// A request line of another HTTP version than 1.0 or 1.1 (505, RFC 9110 §15.6.6).
    package static func unsupportedVersion(_ version: String) -> Self {
        Self(status: 505, reason: "HTTP/\(version) is not supported")
    }
}
