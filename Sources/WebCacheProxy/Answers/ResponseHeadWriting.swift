import HTTPCaching
import HTTPTypes
import HTTPWire
import NIOCore
import NIOHTTP1

/// How a response body is delimited on the wire (RFC 9112 §6).
enum BodyFraming: Sendable, Equatable {
    /// `Content-Length: n`, then exactly n bytes.
    case length(Int)
    /// `Transfer-Encoding: chunked`: chunks as they come, then a last, empty chunk.
    case chunked
    /// No body may follow (HEAD, 1xx, 204, 304); the stored `Content-Length`, if any, is kept.
    case none(contentLength: String?)
    /// No length known, to a client that cannot take chunked (HTTP/1.0, RFC 9112 §6.1): the body
    /// runs until the connection closes (RFC 9112 §6.3), which it does after it.
    case untilClose
}

/// Whether the connection stays open after a response, and whether the response says so.
enum ConnectionPersistence: Sendable, Equatable {
    /// The connection closes after this response: `Connection: close`.
    case close
    /// It stays open, as HTTP/1.1 assumes: nothing to say.
    case keepAlive
    /// It stays open for an HTTP/1.0 client that asked: `Connection: keep-alive` (RFC 9112 §9.3).
    case keepAliveAnnounced

    /// For a request head, unless the connection has to close anyway.
    init(for head: RequestHead, closing: Bool) {
        if closing || !head.keepAlive {
            self = .close
        } else {
            self = head.version.minor == 0 ? .keepAliveAnnounced : .keepAlive
        }
    }

    var keepsAlive: Bool { self != .close }
}

extension ByteBuffer {
    /// Writes an HTTP/1.1 response head: ``writeResponseHeadFields(_:)``, then
    /// ``writeResponseHeadEnd(contentRange:framing:persistence:)`` with the response's own
    /// `Content-Range`.
    mutating func writeResponseHead(_ response: HTTPResponse, framing: BodyFraming, persistence: ConnectionPersistence)
    {
        writeResponseHeadFields(response)
        writeResponseHeadEnd(
            contentRange: response.headerFields.value(.contentRange), framing: framing, persistence: persistence)
    }

    /// Writes the part of a response head that is the same for every range of a body: the
    /// status line and the fields, without the framing fields, `Connection` and `Content-Range`
    /// (which ``writeResponseHeadEnd(contentRange:framing:persistence:)`` writes).
    mutating func writeResponseHeadFields(_ response: HTTPResponse) {
        writeStaticString("HTTP/1.1 ")
        let code = response.status.code
        writeString(String(code))
        writeStaticString(" ")
        // The origin's phrase, or the usual one (the phrase may be empty: RFC 9112 §4).
        writeString(
            response.status.reasonPhrase.isEmpty
                ? HTTPResponseStatus(statusCode: code).reasonPhrase : response.status.reasonPhrase)
        writeStaticString("\r\n")
        for field in response.headerFields
        where field.name != .contentLength && field.name != .transferEncoding && field.name != .connection
            && field.name != .contentRange
        {
            writeString(field.name.rawName)
            writeStaticString(": ")
            writeString(field.value)
            writeStaticString("\r\n")
        }
    }

    /// Ends a response head: `Content-Range` when given, the framing of `framing`, the
    /// `Connection` of `persistence` and the empty line.
    mutating func writeResponseHeadEnd(contentRange: String?, framing: BodyFraming, persistence: ConnectionPersistence)
    {
        if let contentRange {
            writeStaticString("Content-Range: ")
            writeString(contentRange)
            writeStaticString("\r\n")
        }
        switch framing {
        case .length(let count):
            writeStaticString("Content-Length: ")
            writeDecimal(count)
            writeStaticString("\r\n")
        case .chunked:
            writeStaticString("Transfer-Encoding: chunked\r\n")
        case .none(let contentLength):
            if let contentLength {
                writeStaticString("Content-Length: ")
                writeString(contentLength)
                writeStaticString("\r\n")
            }
        case .untilClose:
            break
        }
        switch persistence {
        case .close: writeStaticString("Connection: close\r\n")
        case .keepAliveAnnounced: writeStaticString("Connection: keep-alive\r\n")
        case .keepAlive: break
        }
        writeStaticString("\r\n")
    }

    /// Ends the head of a 206 for `range` of a body of `completeLength` bytes: its
    /// `Content-Range` and `Content-Length`, the `Connection` of `persistence` and the empty line,
    /// with the numbers written as digits straight into the buffer (a seek's head is written for
    /// every request).
    mutating func writeRangeHeadEnd(range: Range<Int>, completeLength: Int, persistence: ConnectionPersistence) {
        guard range.lowerBound >= 0, !range.isEmpty, completeLength >= range.upperBound else {
            // Not a range of the body (callers never ask): written as it is, field by field.
            writeStaticString("Content-Range: bytes ")
            writeString("\(range.lowerBound)-\(range.upperBound - 1)/\(completeLength)\r\n")
            writeResponseHeadEnd(contentRange: nil, framing: .length(range.count), persistence: persistence)
            return
        }
        // One reservation and plain stores: a player's every seek ends its head here.
        writeWithUnsafeMutableBytes(minimumWritableBytes: Self.longestRangeHeadEnd) { buffer in
            var out = HeadCursor(buffer)
            out.append("Content-Range: bytes ")
            out.appendDecimal(range.lowerBound)
            out.append("-")
            out.appendDecimal(range.upperBound - 1)
            out.append("/")
            out.appendDecimal(completeLength)
            out.append("\r\nContent-Length: ")
            out.appendDecimal(range.count)
            switch persistence {
            case .close: out.append("\r\nConnection: close\r\n\r\n")
            case .keepAliveAnnounced: out.append("\r\nConnection: keep-alive\r\n\r\n")
            case .keepAlive: out.append("\r\n\r\n")
            }
            return out.written
        }
    }

    /// The most bytes ``writeRangeHeadEnd(range:completeLength:persistence:)`` writes: its text
    /// and four numbers of at most 19 digits.
    static let longestRangeHeadEnd = 128 + 4 * 19

    /// Writes `value` in decimal digits, as `String(value)` would, without making the string.
    mutating func writeDecimal(_ value: Int) {
        guard value >= 0 else {
            writeString(String(value))
            return
        }
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var remaining = value
        writeWithUnsafeMutableBytes(minimumWritableBytes: digits) { buffer in
            for index in stride(from: digits - 1, through: 0, by: -1) {
                buffer[index] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
            }
            return digits
        }
    }

    /// Writes one chunk of a chunked body (RFC 9112 §7.1); an empty `chunk` writes nothing, since
    /// an empty chunk would end the body.
    mutating func writeChunk(_ chunk: some Collection<UInt8>) {
        guard !chunk.isEmpty else { return }
        writeString(String(chunk.count, radix: 16))
        writeStaticString("\r\n")
        writeBytes(chunk)
        writeStaticString("\r\n")
    }

    /// A piece of a body: as it is, or as a chunk of a chunked body (nothing for an empty
    /// piece, which would end a chunked body).
    mutating func writeBody(_ bytes: some Collection<UInt8>, chunked: Bool) {
        if chunked { writeChunk(bytes) } else { writeBytes(bytes) }
    }

    /// The last chunk of a chunked body, without trailers.
    static let lastChunk = ByteBuffer(string: "0\r\n\r\n")
}

/// Writes text and decimal numbers into memory reserved for them (the caller reserves enough).
private struct HeadCursor {
    private let buffer: UnsafeMutableRawBufferPointer
    private(set) var written = 0

    init(_ buffer: UnsafeMutableRawBufferPointer) {
        self.buffer = buffer
    }

    mutating func append(_ text: StaticString) {
        let count = text.utf8CodeUnitCount
        (buffer.baseAddress! + written).copyMemory(from: text.utf8Start, byteCount: count)
        written += count
    }

    /// `value` (not negative) in decimal digits.
    mutating func appendDecimal(_ value: Int) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        var remaining = value
        for index in stride(from: written + digits - 1, through: written, by: -1) {
            buffer[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
            remaining /= 10
        }
        written += digits
    }
}
