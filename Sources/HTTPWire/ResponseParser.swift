import NIOCore
import NIOHTTP1

/// A strict, incremental HTTP/1.1 response parser (RFC 9112) for the proxy's origin leg: bytes go
/// in as they are read, and come out as interim heads, a final head, the body's bytes and the end
/// of each response — the counterpart of ``RequestParser``, with the same strictness about
/// lines and fields, and the response's own framing rules: no body after HEAD, 1xx, 204 and 304;
/// `chunked` when `Transfer-Encoding` ends in it (never beside `Content-Length`); else the
/// `Content-Length`; else everything until the origin closes.
///
/// Before each response, say whether its request was `HEAD` (``expectResponse(toHEAD:)``). After a
/// response that closes the connection, what follows is ignored. Heads and body chunks are
/// slices of the bytes read.
package struct ResponseParser {
    package enum Part {
        /// An interim (1xx) or final head.
        case head(ResponseHead)
        case body(ByteBuffer)
        case end
    }

    private enum State {
        case head
        /// A head without a body was returned, or a body's last piece: its end comes next.
        case endDue
        case body(MessageBody)
        /// After a response that closes the connection: what follows is ignored.
        case closing
        case failed
    }

    private let headSizeLimit: Int
    /// Bytes of one chunk-size line, extensions included (longer is a malformed response).
    private static let chunkLineLimit = 4096
    private var lines = LineScanner()
    private var state = State.head
    private var toHEAD = false
    /// What the parser does once the response whose parts are being returned ends.
    private var afterEnd = State.head

    /// A parser that refuses heads longer than `headSizeLimit` bytes (by default 256 KiB, what
    /// browsers take: sites with many cookies send large heads).
    package init(headSizeLimit: Int = 256 << 10) {
        self.headSizeLimit = headSizeLimit
    }

    /// The next response answers a `HEAD` (no body follows its head) or not.
    package mutating func expectResponse(toHEAD: Bool) {
        self.toHEAD = toHEAD
    }

    /// Whether bytes were read that no part has been returned for yet: after the end of a
    /// response, bytes the origin sent past it (a body longer than its `Content-Length`), which
    /// make the connection unfit for another request.
    package var hasUnreadBytes: Bool { lines.buffered > 0 }

    /// Adds bytes read from the origin.
    package mutating func append(_ bytes: ByteBuffer) {
        lines.append(bytes)
    }

    /// The next part, or `nil` until more bytes come. Throws once, on bytes that are not a
    /// response; nothing is returned after that.
    package mutating func next() throws -> Part? {
        do {
            return try step()
        } catch let error as HTTPParseError {
            state = .failed
            lines.discard()
            throw error
        }
    }

    /// The origin closed the connection: the end of a body delimited by the close, `nil` when
    /// no response was under way; throws when the close cuts a response short.
    package mutating func connectionClosed() throws -> Part? {
        switch state {
        case .body(let body) where body.endsWithConnection:
            state = .closing
            return .end
        case .head where lines.buffered == 0, .closing, .failed:
            return nil
        default:
            state = .failed
            throw HTTPParseError.malformed("the connection closed in the middle of a response")
        }
    }

    private mutating func step() throws -> Part? {
        switch state {
        case .head:
            guard let head = try nextHead() else { return nil }
            return .head(head)
        case .endDue:
            state = afterEnd
            if case .closing = state { lines.discard() }
            return .end
        case .body(var body):
            let piece = try body.next(from: &lines, chunkLineLimit: Self.chunkLineLimit, trailerLimit: headSizeLimit)
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
        case .closing:
            lines.discard()
            return nil
        case .failed:
            return nil
        }
    }

    private mutating func nextHead() throws -> ResponseHead? {
        guard let bytes = try lines.nextFieldSection(limit: headSizeLimit, what: "response head") else { return nil }
        let head = try HeadParsing.parseResponse(bytes, toHEAD: toHEAD)
        afterEnd = head.keepAlive || head.isInterim ? .head : .closing
        switch head.framing {
        case _ where head.isInterim: state = .head
        case .none, .length(0): state = .endDue
        case .length(let length): state = .body(.length(length))
        case .chunked: state = .body(.chunked)
        case .untilClose: state = .body(.untilClose)
        }
        return head
    }
}
