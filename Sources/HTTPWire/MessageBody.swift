import NIOCore

/// The body of one message after its head, read as RFC 9112 §6 and §7.1 frame it: a number of
/// bytes, chunks and then trailers, or everything until the connection closes. Shared by
/// ``RequestParser`` and ``ResponseParser``, which decide the framing from the head and take the
/// body's pieces from here until it ends.
struct MessageBody {
    private enum State {
        case remaining(Int)
        case untilClose
        case chunkSize
        case chunkData(remaining: Int)
        /// The CRLF after a chunk's data.
        case chunkDataEnd
        case trailers
        case ended
    }

    /// A piece of the body.
    enum Piece {
        /// Bytes of the body (a slice of those read).
        case data(ByteBuffer)
        /// The body is complete (trailers, if any, read and dropped).
        case end
    }

    private var state: State

    /// A body of `length` bytes (more than none).
    static func length(_ length: Int) -> MessageBody { MessageBody(state: .remaining(length)) }
    /// A chunked body.
    static let chunked = MessageBody(state: .chunkSize)
    /// A body that ends when the connection does (``next(from:chunkLineLimit:trailerLimit:)``
    /// never ends it).
    static let untilClose = MessageBody(state: .untilClose)

    private init(state: State) {
        self.state = state
    }

    /// Whether the body is delimited by the close of the connection.
    var endsWithConnection: Bool {
        if case .untilClose = state { return true }
        return false
    }

    /// The next piece from `lines`, or `nil` until more bytes come. A chunk-size line longer
    /// than `chunkLineLimit`, or trailers longer than `trailerLimit`, throws.
    mutating func next(from lines: inout LineScanner, chunkLineLimit: Int, trailerLimit: Int) throws -> Piece? {
        switch state {
        case .remaining(let remaining):
            guard let chunk = lines.readBody(upTo: remaining) else { return nil }
            state = remaining == chunk.readableBytes ? .ended : .remaining(remaining - chunk.readableBytes)
            return .data(chunk)
        case .untilClose:
            guard let chunk = lines.readBody(upTo: .max) else { return nil }
            return .data(chunk)
        case .chunkSize:
            guard let size = try lines.nextChunkSize(lineLimit: chunkLineLimit) else { return nil }
            state = size == 0 ? .trailers : .chunkData(remaining: size)
        case .chunkData(let remaining):
            guard let chunk = lines.readBody(upTo: remaining) else { return nil }
            state =
                remaining == chunk.readableBytes
                ? .chunkDataEnd : .chunkData(remaining: remaining - chunk.readableBytes)
            return .data(chunk)
        case .chunkDataEnd:
            guard try lines.skipLineEnd() else { return nil }
            state = .chunkSize
        case .trailers:
            guard try lines.skipTrailers(limit: trailerLimit) else { return nil }
            state = .ended
        case .ended:
            return .end
        }
        return try next(from: &lines, chunkLineLimit: chunkLineLimit, trailerLimit: trailerLimit)
    }
}
