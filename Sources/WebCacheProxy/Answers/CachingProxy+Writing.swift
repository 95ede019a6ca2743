import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import WebCache
import WebCacheNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CachingProxy {
    /// Writes a response: a whole body in one trip to the event loop (waiting for it to be
    /// written when the connection closes after it), a body still arriving chunk by chunk as it
    /// arrives (with the origin's `Content-Length`, or chunked). A body that fails half-way
    /// closes the connection, so the client sees it was cut short. Returns
    /// the body's stream when the answer was over before the stream ended (its length all
    /// written, the entry not yet committed): the connection waits for it before the answer
    /// after next, so that a client cannot run ahead of the store by more than one answer.
    @discardableResult
    nonisolated(nonsending) func write(
        _ response: ProxyResponse, framing: BodyFraming, to channel: any Channel, persistence: ConnectionPersistence,
        method: NIOHTTP1.HTTPMethod
    ) async -> UnendedBody? {
        guard case .arriving(let stream) = response.body else {
            // A connection that closes after the answer waits for it to be written: closing
            // drops what the socket has not taken yet.
            let written = persistence.keepsAlive ? nil : channel.eventLoop.makePromise(of: Void.self)
            channel.eventLoop.execute { [self] in
                send(
                    encode(response, allocator: channel.allocator, persistence: persistence, method: method),
                    to: channel, flush: true, written: written)
            }
            try? await written?.futureResult.get()
            return nil
        }
        metrics.countResponse(status: response.head.status.code)
        // The iterators below come and go: this holds the body as read until the answer ends
        // (a client that goes away leaves a body nothing else reads, which is then given up).
        let reading = stream.holdReading()
        defer { withExtendedLifetime(reading) {} }
        var buffer = channel.allocator.buffer(capacity: 1024)
        buffer.writeResponseHead(response.head, framing: framing, persistence: persistence)
        do {
            if case .none = framing {
                try await channel.writeAndFlush(buffer)
                return nil
            }
            // Each write takes every chunk that has arrived (up to a limit): the head goes out
            // with the first chunks, in one packet for a small body, rather than a write for the
            // head and one per chunk. Waiting comes only when nothing that has arrived is left.
            // A buffer is made to the size of what it carries and let go once written, so a
            // connection holds no more than one write's bytes.
            let chunked = framing == .chunked
            let declared: Int? = if case .length(let length) = framing { length } else { nil }
            var sent = 0
            var index = 0
            var waited: Data?
            while true {
                var gathered: [Data] = waited.map { [$0] } ?? []
                var size = waited?.count ?? 0
                while size < Self.streamedWriteSize, let chunk = stream.arrivedChunk(at: index) {
                    gathered.append(chunk)
                    size += chunk.count
                    index += 1
                }
                var writes: [ByteBuffer] = []
                if size > 0 {
                    writes = Self.carrying(gathered, after: &buffer, size: size, chunked: chunked)
                    sent += size
                }
                if buffer.readableBytes > 0 {
                    writes.append(buffer)
                    buffer = ByteBuffer()
                }
                if let last = writes.popLast() {
                    for write in writes { channel.write(write, promise: nil) }
                    try await channel.writeAndFlush(last)
                }
                // The client has every byte its Content-Length announced: the answer is whole for
                // it, and the next request on the connection need not wait for the end of the
                // origin's stream, which the engine gives only once the entry is committed (a
                // request for the same URL meanwhile joins the fetch). Only for a body of one
                // write or less: a larger one would hold its memory for longer, and its answer
                // takes long enough that the commit is no wait.
                if let declared, sent >= declared, declared <= Self.streamedWriteSize {
                    return UnendedBody(stream: stream, index: index)
                }
                var rest = stream.makeAsyncIterator(startingAt: index)
                guard let chunk = try await rest.next() else { break }
                waited = chunk
                index += 1
            }
            if framing == .chunked { try await channel.writeAndFlush(ByteBuffer.lastChunk) }
        } catch {
            logger.debug("response cut short: \(error)")
            // A body delimited by the close would look whole to its client after a plain close:
            // a reset (SO_LINGER 0) says it was cut.
            if framing == .untilClose, let socket = channel as? any SocketOptionProvider {
                try? await socket.setSoLinger(linger(l_onoff: 1, l_linger: 0)).get()
            }
            try? await channel.close()
        }
        return nil
    }

    /// The buffers that carry `chunks` (`size` bytes in all) after what `pending` holds (the
    /// head, or nothing), in order, but for what is left in `pending` to go last. A chunk that is
    /// an origin's read, handed over without a copy (``ChunkBuffers``), goes as that buffer; the
    /// others are copied into `pending` and the buffers between. A chunked body is copied whole
    /// (its chunks' sizes go between them).
    static func carrying(_ chunks: [Data], after pending: inout ByteBuffer, size: Int, chunked: Bool) -> [ByteBuffer] {
        guard !chunked, let origins = ChunkBuffers.buffers(of: chunks) else {
            pending.reserveCapacity(pending.readableBytes + size + (chunked ? 12 * chunks.count : 0))
            for chunk in chunks { pending.writeBody(chunk, chunked: chunked) }
            return []
        }
        var buffers: [ByteBuffer] = []
        for (chunk, origin) in zip(chunks, origins) {
            if let origin {
                if pending.readableBytes > 0 { buffers.append(pending) }
                pending = ByteBuffer()
                buffers.append(origin)
            } else {
                pending.reserveCapacity(pending.readableBytes + chunk.count)
                pending.writeBody(chunk, chunked: false)
            }
        }
        return buffers
    }

    /// How many bytes of a streamed body one write gathers, from the chunks that have arrived
    /// (the next write waits for it to be sent): about what one chunk from the origin held
    /// before, so a slow client holds no more memory in writes than it did.
    static let streamedWriteSize = 64 << 10

    /// Encodes a response whose body is whole, and counts it as sent. A body file goes with it
    /// only when a body follows (not for HEAD or 304).
    func encode(
        _ response: ProxyResponse, allocator: ByteBufferAllocator, persistence: ConnectionPersistence,
        method: NIOHTTP1.HTTPMethod
    ) -> EncodedAnswer {
        let framing = framing(of: response, method: method)
        metrics.countResponse(status: response.head.status.code)
        let sendsBody = if case .length = framing { true } else { false }
        switch response.body {
        case .file(let file) where sendsBody:
            var head = allocator.buffer(capacity: 512)
            head.writeResponseHead(response.head, framing: framing, persistence: persistence)
            return .headThenFile(head, file)
        case .file, .whole, .arriving:
            break
        }
        let body = if case .whole(let data) = response.body, sendsBody { data } else { Data() }
        var buffer = allocator.buffer(capacity: 512 + body.count)
        buffer.writeResponseHead(response.head, framing: framing, persistence: persistence)
        buffer.writeBytes(body)
        return .bytes(buffer)
    }

    /// Writes an encoded answer (and its body file), and flushes unless the caller flushes
    /// later; `written` (if any) completes once it is written. Bytes alone go without a promise
    /// when none is asked for: most answers on a kept-alive connection need none.
    func send(
        _ answer: EncodedAnswer, to channel: any Channel, flush: Bool, written: EventLoopPromise<Void>? = nil
    ) {
        Self.send(answer, on: channel.eventLoop, written: written) { channel.write($0, promise: $1) }
        if flush { channel.flush() }
    }

    /// Writes an encoded answer with `write` — a channel's, or that of a handler's context, which
    /// skips the handlers behind it — on `eventLoop`, the channel's; `written` (if any) completes
    /// once it is written. A body file is borrowed for the write and given back once written.
    static func send(
        _ answer: EncodedAnswer, on eventLoop: any EventLoop, written: EventLoopPromise<Void>?,
        write: (IOData, EventLoopPromise<Void>?) -> Void
    ) {
        switch answer {
        case .bytes(let bytes):
            write(.byteBuffer(bytes), written)
        case .headThenFile(let head, let file):
            write(.byteBuffer(head), nil)
            let handle = file.borrowHandle()
            let region = FileRegion(fileHandle: handle, readerIndex: file.offset, endIndex: file.offset + file.size)
            write(.fileRegion(region), promise(written, on: eventLoop) { file.release(handle) })
        case .wholeFile(let wireFile):
            let handle = wireFile.borrowHandle()
            let region = FileRegion(fileHandle: handle, readerIndex: 0, endIndex: wireFile.size)
            write(.fileRegion(region), promise(written, on: eventLoop) { wireFile.release(handle) })
        }
    }

    /// The promise of a write of a borrowed file, which gives the file back (`release`) once it
    /// is written: `written` when the caller asked for one, else a new one.
    private static func promise(
        _ written: EventLoopPromise<Void>?, on eventLoop: any EventLoop, release: @escaping @Sendable () -> Void
    ) -> EventLoopPromise<Void> {
        let sent = written ?? eventLoop.makePromise()
        sent.futureResult.whenComplete { _ in release() }
        return sent
    }

    /// How the body of `response` goes on the wire to a client speaking `version`: as
    /// ``framing(of:method:)`` says, except that a body of unknown length goes to an HTTP/1.0
    /// client until the connection closes, as it cannot take chunked (RFC 9112 §6.1).
    func framing(of response: ProxyResponse, method: NIOHTTP1.HTTPMethod, version: HTTPVersion) -> BodyFraming {
        let framing = framing(of: response, method: method)
        return framing == .chunked && version.major == 1 && version.minor == 0 ? .untilClose : framing
    }

    /// How the body of `response` goes on the wire: none where none may follow (HEAD, 1xx, 204,
    /// 304: the stored `Content-Length` is kept, except on 1xx and 204; HEAD without one gets the
    /// length of a body at hand), the length of a whole body, the origin's `Content-Length` for
    /// a body still arriving, or chunked without one.
    private func framing(of response: ProxyResponse, method: NIOHTTP1.HTTPMethod) -> BodyFraming {
        let code = response.head.status.code
        guard method != .HEAD && code != 204 && code != 304 && code >= 200 else {
            if code < 200 || code == 204 { return .none(contentLength: nil) }
            if let length = response.head.headerFields.value(.contentLength) { return .none(contentLength: length) }
            // HEAD: the length a GET would get when the body is at hand, else none (not 0, which
            // would say the body is empty).
            guard method == .HEAD, code != 304 else { return .none(contentLength: nil) }
            switch response.body {
            case .whole(let body) where !body.isEmpty: return .none(contentLength: String(body.count))
            case .file(let file): return .none(contentLength: String(file.size))
            default: return .none(contentLength: nil)
            }
        }
        switch response.body {
        case .file(let file): return .length(file.size)
        case .whole(let body): return .length(body.count)
        case .arriving: break
        }
        if let declared = response.head.headerFields.value(.contentLength), let length = Int(declared), length >= 0 {
            return .length(length)
        }
        return .chunked
    }
}
