import NIOCore
import NIOHTTP1

/// How a response's body is delimited (RFC 9112 §6.3).
package enum ResponseFraming: Sendable, Equatable {
    /// No body: a response to HEAD, a 1xx, 204 or 304.
    case none
    /// `Content-Length: n`.
    case length(Int)
    /// `Transfer-Encoding: …, chunked`.
    case chunked
    /// Neither: the body is what comes until the origin closes the connection.
    case untilClose
}

/// A response head as the origin sent it: its bytes, and where its fields lie in them.
package struct ResponseHead: Sendable {
    /// The status line and the fields as they came, then the empty line.
    package let bytes: ByteBuffer
    package let version: HTTPVersion
    package let status: Int
    /// Where the reason phrase lies in ``bytes`` (it may be empty).
    package let reason: Range<Int>
    package let fields: [FieldSpan]
    package let framing: ResponseFraming
    /// Whether the connection may carry another request after this response (RFC 9112 §9.3).
    package let keepAlive: Bool

    /// Whether this is an interim response (1xx), which a final one follows.
    package var isInterim: Bool { status < 200 }

    /// The text of `range` of the head's bytes.
    package func string(_ range: Range<Int>) -> String {
        bytes.getString(at: bytes.readerIndex + range.lowerBound, length: range.count) ?? ""
    }
}
