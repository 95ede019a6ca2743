import NIOCore
import NIOHTTP1

/// A strict, incremental HTTP/1.1 request parser (RFC 9112): bytes go in as they are read, and
/// come out as a head, the body's bytes and the end of each request, in order.
///
/// Strict where leniency lets two parsers disagree about where a request ends (request
/// smuggling): a line ends in CRLF only (a bare LF or CR is refused); no whitespace between a
/// field's name and its colon, no obsolete line folding, no control characters in values; one
/// `Content-Length` value, however often repeated; `Transfer-Encoding` only with `chunked` last,
/// never beside `Content-Length`, never in HTTP/1.0. What it refuses it refuses with the status
/// that says why (``RequestParseError``), and the connection closes after that refusal.
///
/// After a `CONNECT`, or a request that asks to change protocols, it pauses: the bytes that
/// follow belong to a tunnel, if one is made (``takeUnparsedBytes()``), or are parsed again once
/// the connection goes on in HTTP (``resume()``). After a request that closes the connection
/// (`Connection: close`, HTTP/1.0 without keep-alive) what follows is ignored (RFC 9112 §9.6).
///
/// Heads and body chunks are slices of the bytes read: nothing is copied on the way.
package struct RequestParser {
    /// A part of a request.
    package enum Part {
        case head(RequestHead)
        case body(ByteBuffer)
        case end
    }

    /// Bounds on what one request may hold before it is refused.
    package struct Limits {
        package init(headSize: Int) {
            self.headSize = headSize
        }

        /// Bytes of request line and fields (431 past it).
        package var headSize: Int
        /// Fields in one head (431 past it).
        package var fieldCount = 1024
        /// Bytes of one chunk-size line, extensions included (400 past it).
        package var chunkLineSize = 4096
    }

    private enum State {
        /// Waiting for a head.
        case head
        /// A head without a body was returned: its end comes next.
        case endDue
        case body(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        /// The CRLF after a chunk's data.
        case chunkDataEnd
        case trailers
        /// After a `CONNECT` or an upgrade: what follows is not parsed until ``resume()``.
        case paused
        /// After a request that closes the connection (RFC 9112 §9.6): what follows is ignored.
        case closing
        /// Bytes were refused: nothing more is parsed.
        case failed
    }

    package let limits: Limits
    private var buffer = ByteBuffer()
    private var state = State.head
    /// Where the search for the end of a head, a trailer section or a chunk-size line goes on
    /// (offset from the buffer's reader index): the bytes before it hold none.
    private var scanned = 0
    /// What the parser does once the request whose parts are being returned ends.
    private var afterEnd = State.head

    package init(limits: Limits) {
        self.limits = limits
    }

    /// Adds bytes read from the client.
    package mutating func append(_ bytes: ByteBuffer) {
        if buffer.readableBytes == 0 {
            buffer = bytes
        } else {
            var bytes = bytes
            buffer.writeBuffer(&bytes)
        }
    }

    /// The next part of a request, or `nil` until more bytes come (or while paused). Throws
    /// once, on bytes that are not a request the proxy takes; nothing is returned after that.
    package mutating func next() throws -> Part? {
        do {
            return try step()
        } catch let error as RequestParseError {
            state = .failed
            buffer = ByteBuffer()
            throw error
        }
    }

    /// Whether the parser waits for ``resume()`` after a `CONNECT` or an upgrade.
    var isPaused: Bool {
        if case .paused = state { return true }
        return false
    }

    /// Goes on parsing HTTP after a pause: the `CONNECT` or upgrade did not become a tunnel.
    mutating func resume() {
        guard case .paused = state else { return }
        state = .head
        scanned = 0
    }

    /// The bytes not parsed yet, taken out: what a client sent after a `CONNECT` or an upgrade,
    /// for the tunnel that takes the connection over.
    mutating func takeUnparsedBytes() -> ByteBuffer {
        defer { buffer = ByteBuffer() }
        return buffer
    }

    /// Whether part of a request has come and its end has not: the client ending the
    /// connection now cuts a request short (a 400, as for bytes that are not HTTP).
    var isMidRequest: Bool {
        switch state {
        case .head: buffer.readableBytes > 0
        case .endDue, .paused, .closing, .failed: false
        case .body, .chunkSize, .chunkData, .chunkDataEnd, .trailers: true
        }
    }

    private mutating func step() throws -> Part? {
        switch state {
        case .head:
            return try nextHead()
        case .endDue:
            state = afterEnd
            scanned = 0
            if case .closing = state { buffer = ByteBuffer() }
            return .end
        case .body(let remaining):
            guard let chunk = readBody(upTo: remaining) else { return nil }
            state = remaining == chunk.readableBytes ? .endDue : .body(remaining: remaining - chunk.readableBytes)
            return .body(chunk)
        case .chunkSize:
            guard let size = try nextChunkSize() else { return nil }
            state = size == 0 ? .trailers : .chunkData(remaining: size)
            return try step()
        case .chunkData(let remaining):
            guard let chunk = readBody(upTo: remaining) else { return nil }
            state =
                remaining == chunk.readableBytes
                ? .chunkDataEnd : .chunkData(remaining: remaining - chunk.readableBytes)
            return .body(chunk)
        case .chunkDataEnd:
            guard buffer.readableBytes >= 2 else { return nil }
            let ending = buffer.withUnsafeReadableBytes { ($0[0], $0[1]) }
            guard ending == (HTTPBytes.carriageReturn, HTTPBytes.lineFeed) else {
                throw RequestParseError.malformed("a chunk's data is not followed by CRLF")
            }
            buffer.moveReaderIndex(forwardBy: 2)
            state = .chunkSize
            return try step()
        case .trailers:
            guard try skipTrailers() else { return nil }
            state = .endDue
            return try step()
        case .paused, .failed:
            return nil
        case .closing:
            buffer = ByteBuffer()
            return nil
        }
    }

    /// Up to `remaining` bytes of a body, as they have come.
    private mutating func readBody(upTo remaining: Int) -> ByteBuffer? {
        let count = min(remaining, buffer.readableBytes)
        guard count > 0 else { return nil }
        return buffer.readSlice(length: count)
    }

    private mutating func nextHead() throws -> Part? {
        skipLeadingEmptyLines()
        guard let end = try findEndOfFields(limit: limits.headSize, what: "request head") else {
            return nil
        }
        let bytes = buffer.readSlice(length: end)!
        scanned = 0
        let request = try HeadParsing.parse(bytes, limits: limits)
        if request.method == .CONNECT || request.asksToUpgrade {
            afterEnd = .paused
        } else {
            afterEnd = request.keepAlive ? .head : .closing
        }
        switch request.framing {
        case .none, .length(0): state = .endDue
        case .length(let length): state = .body(remaining: length)
        case .chunked: state = .chunkSize
        }
        return .head(request)
    }

    /// RFC 9112 §2.2: empty lines before a request line are ignored.
    private mutating func skipLeadingEmptyLines() {
        while buffer.readableBytes >= 2,
            buffer.withUnsafeReadableBytes({ $0[0] == HTTPBytes.carriageReturn && $0[1] == HTTPBytes.lineFeed })
        {
            buffer.moveReaderIndex(forwardBy: 2)
        }
    }

    /// The length of the fields section at the start of the buffer, through the empty line that
    /// ends it, once it has all come (`nil` until then). Every LF must follow a CR; a section
    /// that grows past `limit` bytes without ending is refused.
    private mutating func findEndOfFields(limit: Int, what: String) throws -> Int? {
        let (found, searched) = try buffer.withUnsafeReadableBytes { raw -> (Int?, Int) in
            var index = scanned
            while index < raw.count {
                guard let lineFeed = Self.index(of: HTTPBytes.lineFeed, in: raw, from: index) else {
                    return (nil, raw.count)
                }
                guard lineFeed > 0, raw[lineFeed - 1] == HTTPBytes.carriageReturn else {
                    throw RequestParseError.malformed("a line of the \(what) ends in a bare LF")
                }
                // An empty line: CRLF right after the CRLF before it (or at the very start).
                if lineFeed == 1
                    || (lineFeed >= 3 && raw[lineFeed - 2] == HTTPBytes.lineFeed
                        && raw[lineFeed - 3] == HTTPBytes.carriageReturn)
                {
                    return (lineFeed + 1, lineFeed + 1)
                }
                index = lineFeed + 1
            }
            return (nil, raw.count)
        }
        if let found {
            guard found <= limit + 2 else {
                throw RequestParseError.headTooLarge("the \(what) is \(found - 2) bytes; the limit is \(limit)")
            }
            return found
        }
        scanned = searched
        if searched > limit + 2 {
            throw RequestParseError.headTooLarge("the \(what) passed \(limit) bytes without ending")
        }
        return nil
    }

    /// The size of the next chunk, once its whole line has come (`nil` until then): hexadecimal
    /// digits, then nothing or extensions (RFC 9112 §7.1.1), then CRLF.
    private mutating func nextChunkSize() throws -> Int? {
        let parsed = try buffer.withUnsafeReadableBytes { raw -> (size: Int, lineLength: Int)? in
            guard let lineFeed = Self.index(of: HTTPBytes.lineFeed, in: raw, from: scanned) else {
                guard raw.count <= limits.chunkLineSize else {
                    throw RequestParseError.malformed("a chunk-size line passed \(limits.chunkLineSize) bytes")
                }
                return nil
            }
            guard lineFeed > 0, raw[lineFeed - 1] == HTTPBytes.carriageReturn else {
                throw RequestParseError.malformed("a chunk-size line ends in a bare LF")
            }
            let lineEnd = lineFeed - 1
            var index = 0
            var size = 0
            while index < lineEnd, let digit = HTTPBytes.hexValue(raw[index]) {
                // Fifteen hexadecimal digits at most: 2^60 bytes, and no overflow.
                guard index < 15 else { throw RequestParseError.malformed("a chunk size of more than 15 digits") }
                size = size << 4 | digit
                index += 1
            }
            guard index > 0 else { throw RequestParseError.malformed("a chunk-size line without a size") }
            try Self.checkChunkExtensions(UnsafeRawBufferPointer(rebasing: raw[index..<lineEnd]))
            return (size, lineFeed + 1)
        }
        guard let parsed else {
            scanned = buffer.readableBytes
            return nil
        }
        buffer.moveReaderIndex(forwardBy: parsed.lineLength)
        scanned = 0
        return parsed.size
    }

    /// What may follow a chunk's size on its line (RFC 9112 §7.1.1): nothing, or extensions —
    /// `;name` or `;name=value`, the value a token or a quoted string — whose meaning is
    /// ignored. Without the optional whitespace the grammar allows around `;` and `=`, which
    /// SwiftNIO's parser refused too.
    private static func checkChunkExtensions(_ bytes: UnsafeRawBufferPointer) throws {
        var index = 0
        func token() -> Bool {
            let start = index
            while index < bytes.count, HTTPBytes.isTokenCharacter(bytes[index]) { index += 1 }
            return index > start
        }
        func quotedString() -> Bool {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                case UInt8(ascii: "\\"):
                    guard index + 1 < bytes.count, HTTPBytes.isFieldValueByte(bytes[index + 1]) else { return false }
                    index += 2
                case let byte where HTTPBytes.isFieldValueByte(byte):
                    index += 1
                default:
                    return false
                }
            }
            return false
        }
        while index < bytes.count {
            guard bytes[index] == HTTPBytes.semicolon else {
                throw RequestParseError.malformed("a chunk size followed by something other than extensions")
            }
            index += 1
            guard token() else { throw RequestParseError.malformed("a chunk extension without a name") }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            let valid = index < bytes.count && (bytes[index] == UInt8(ascii: "\"") ? quotedString() : token())
            guard valid else { throw RequestParseError.malformed("a chunk extension with a malformed value") }
        }
    }

    /// Skips the trailer section after the last chunk, once it has all come: fields, checked as
    /// a head's are, then the empty line. Returns whether it has.
    private mutating func skipTrailers() throws -> Bool {
        guard let end = try findEndOfFields(limit: limits.headSize, what: "trailer section") else { return false }
        try buffer.withUnsafeReadableBytes { raw in
            var index = 0
            while index < end - 2 {
                let (span, next) = try HeadParsing.field(in: raw, at: index)
                // RFC 9110 §6.5.1: no framing fields among the trailers.
                let name = UnsafeRawBufferPointer(rebasing: raw[span.name])
                if RequestHead.equalsIgnoringCase(name, "transfer-encoding")
                    || RequestHead.equalsIgnoringCase(name, "content-length")
                {
                    throw RequestParseError.malformed("a framing field among the trailers")
                }
                index = next
            }
        }
        buffer.moveReaderIndex(forwardBy: end)
        scanned = 0
        return true
    }

    /// The first `byte` in `raw` at or after `start`.
    private static func index(of byte: UInt8, in raw: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < raw.count, let base = raw.baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(byte), raw.count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
