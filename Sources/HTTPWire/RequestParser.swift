import NIOCore
import NIOHTTP1

/// A strict, incremental HTTP/1.1 request parser (RFC 9112): bytes go in as they are read, and
/// come out as a head, the body's bytes and the end of each request, in order.
///
/// Strict where leniency lets two parsers disagree about where a request ends (request
/// smuggling): a line ends in CRLF only (a bare LF or CR is refused); no whitespace between a
/// field's name and its colon, no obsolete line folding, no control characters in values; one
/// `Content-Length`, a number, given once; `Transfer-Encoding` only with `chunked` last, never
/// beside `Content-Length`, never in HTTP/1.0; no tab in either (``FieldFacts``). What it refuses it refuses with the status
/// that says why (``HTTPParseError``), and the connection closes after that refusal.
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
        /// A head without a body was returned, or a body's last piece: its end comes next.
        case endDue
        case body(MessageBody)
        /// After a `CONNECT` or an upgrade: what follows is not parsed until ``resume()``.
        case paused
        /// After a request that closes the connection (RFC 9112 §9.6): what follows is ignored.
        case closing
        /// Bytes were refused: nothing more is parsed.
        case failed
    }

    package let limits: Limits
    private var lines = LineScanner()
    private var state = State.head
    /// What the parser does once the request whose parts are being returned ends.
    private var afterEnd = State.head

    package init(limits: Limits) {
        self.limits = limits
    }

    /// Adds bytes read from the client.
    package mutating func append(_ bytes: ByteBuffer) {
        lines.append(bytes)
    }

    /// The next part of a request, or `nil` until more bytes come (or while paused). Throws
    /// once, on bytes that are not a request the proxy takes; nothing is returned after that.
    package mutating func next() throws -> Part? {
        do {
            return try step()
        } catch let error as HTTPParseError {
            state = .failed
            lines.discard()
            throw error
        }
    }

    /// Whether the parser waits for ``resume()`` after a `CONNECT` or an upgrade.
    package var isPaused: Bool {
        if case .paused = state { return true }
        return false
    }

    /// Goes on parsing HTTP after a pause: the `CONNECT` or upgrade did not become a tunnel.
    package mutating func resume() {
        guard case .paused = state else { return }
        state = .head
    }

    /// The bytes not parsed yet, taken out: what a client sent after a `CONNECT` or an upgrade,
    /// for the tunnel that takes the connection over.
    package mutating func takeUnparsedBytes() -> ByteBuffer {
        lines.take()
    }

    /// Whether part of a request has come and its end has not: the client ending the
    /// connection now cuts a request short (a 400, as for bytes that are not HTTP).
    package var isMidRequest: Bool {
        switch state {
        case .head: lines.buffered > 0
        case .endDue, .paused, .closing, .failed: false
        case .body: true
        }
    }

    private mutating func step() throws -> Part? {
        switch state {
        case .head:
            return try nextHead()
        case .endDue:
            state = afterEnd
            if case .closing = state { lines.discard() }
            return .end
        case .body(var body):
            let piece = try body.next(from: &lines, chunkLineLimit: limits.chunkLineSize, trailerLimit: limits.headSize)
            switch piece {
            case .data(let chunk)?:
                state = .body(body)
                return .body(chunk)
            case .end?:
                state = .endDue
                return try step()
            case nil:
                state = .body(body)
                return nil
            }
        case .paused, .failed:
            return nil
        case .closing:
            lines.discard()
            return nil
        }
    }

    private mutating func nextHead() throws -> Part? {
        lines.skipLeadingEmptyLines()
        guard let bytes = try lines.nextFieldSection(limit: limits.headSize, what: "request head") else {
            return nil
        }
        let request = try HeadParsing.parse(bytes, limits: limits)
        if request.method == .CONNECT || request.asksToUpgrade {
            afterEnd = .paused
        } else {
            afterEnd = request.keepAlive ? .head : .closing
        }
        switch request.framing {
        case .none, .length(0): state = .endDue
        case .length(let length): state = .body(.length(length))
        case .chunked: state = .body(.chunked)
        }
        return .head(request)
    }
}
