import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CachingProxy {
    /// Writes a response: a whole body in one trip to the event loop, a body still arriving
    /// chunk by chunk as it arrives (with the origin's `Content-Length`, or chunked). A body
    /// that fails half-way closes the connection, so the client sees it was cut short.
    func write(_ response: ProxyResponse, to channel: any Channel, persistence: ConnectionPersistence, method: NIOHTTP1.HTTPMethod) async {
        if response.body.completeBody != nil {
            channel.eventLoop.execute { [self] in
                send(encode(response, allocator: channel.allocator, persistence: persistence, method: method), to: channel, flush: true)
            }
            return
        }
        let framing = framing(of: response, method: method)
        metrics.countResponse(status: response.head.status.code)
        var head = ByteBuffer()
        head.writeResponseHead(response.head, framing: framing, persistence: persistence)
        do {
            try await channel.writeAndFlush(head)
            if case .none = framing {} else {
                for try await chunk in response.body where !chunk.isEmpty {
                    var buffer = ByteBuffer()
                    if framing == .chunked { buffer.writeChunk(chunk) } else { buffer.writeBytes(chunk) }
                    try await channel.writeAndFlush(buffer)
                }
                if framing == .chunked { try await channel.writeAndFlush(ByteBuffer.lastChunk) }
            }
        } catch {
            logger.debug("response cut short: \(error)")
            try? await channel.close()
        }
    }

    /// Encodes a response whose body is whole, and counts it as sent. A body file goes with it
    /// only when a body follows (not for HEAD or 304); otherwise it is closed here.
    func encode(
        _ response: ProxyResponse, allocator: ByteBufferAllocator, persistence: ConnectionPersistence, method: NIOHTTP1.HTTPMethod
    ) -> EncodedAnswer {
        let framing = framing(of: response, method: method)
        metrics.countResponse(status: response.head.status.code)
        let body = response.body.completeBody ?? Data()
        var file = response.file
        if case .length = framing {} else {
            try? file?.handle.close()
            file = nil
        }
        let inline = file == nil && framing != .none(contentLength: nil)
        var buffer = allocator.buffer(capacity: 512 + (inline ? body.count : 0))
        buffer.writeResponseHead(response.head, framing: framing, persistence: persistence)
        if inline, case .length = framing { buffer.writeBytes(body) }
        return EncodedAnswer(bytes: buffer, file: file)
    }

    /// Writes an encoded answer (and its body file), and flushes unless the caller flushes
    /// later; the future completes once it is written, the file closed.
    @discardableResult
    func send(_ answer: EncodedAnswer, to channel: any Channel, flush: Bool) -> EventLoopFuture<Void> {
        if let wireFile = answer.wireFile {
            let handle = wireFile.borrowHandle()
            let written = channel.write(IOData.fileRegion(FileRegion(fileHandle: handle, readerIndex: 0, endIndex: wireFile.size)))
            written.whenComplete { _ in wireFile.release(handle) }
            if flush { channel.flush() }
            return written
        }
        var written = channel.write(answer.bytes)
        if let file = answer.file {
            let region = FileRegion(fileHandle: file.handle, readerIndex: file.offset, endIndex: file.offset + file.size)
            written = channel.write(IOData.fileRegion(region))
            written.whenComplete { _ in try? file.handle.close() }
        }
        if flush { channel.flush() }
        return written
    }

    /// How the body of `response` goes on the wire: none where none may follow (HEAD, 1xx, 204,
    /// 304: the stored `Content-Length` is kept, except on 1xx and 204), the length of a whole
    /// body, the origin's `Content-Length` for a body still arriving, or chunked without one.
    private func framing(of response: ProxyResponse, method: NIOHTTP1.HTTPMethod) -> BodyFraming {
        let code = response.head.status.code
        guard method != .HEAD && code != 204 && code != 304 && code >= 200 else {
            if code < 200 || code == 204 { return .none(contentLength: nil) }
            return .none(contentLength: response.head.headerFields[.contentLength] ?? (code == 304 ? nil : "0"))
        }
        if let file = response.file { return .length(file.size) }
        if let complete = response.body.completeBody { return .length(complete.count) }
        if let declared = response.head.headerFields[.contentLength], let length = Int(declared), length >= 0 { return .length(length) }
        return .chunked
    }
}
