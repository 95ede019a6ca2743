import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Turns file regions written by the answer path (stored bodies and whole answers sent with
/// `sendfile` on plain connections) into buffers for a handler in front that takes only bytes,
/// such as TLS. Large regions are read a slice at a time, the next once the previous is on its
/// way to the socket, so a client that reads slowly holds one slice, not the body. Writes keep
/// their order.
final class FileRegionReader: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = ByteBuffer

    /// Bytes read from a file for one write.
    static let sliceSize = 256 << 10

    /// The buffer the last slice on this thread was read into, kept for the next: once TLS
    /// has encrypted a slice (at the flush that ends the loop's tick) the buffer is this
    /// thread's alone again and is refilled in place. A new buffer per slice would cost page
    /// faults on every answer (its pages fresh from the kernel each time).
    private final class Scratch: @unchecked Sendable {
        var buffer = ByteBuffer()
    }

    private static let scratch = ThreadSpecificVariable<Scratch>()

    private var queue = CircularBuffer<(data: IOData, promise: EventLoopPromise<Void>?)>()
    private var reading = false
    private var flushPending = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let data = unwrapOutboundIn(data)
        if case .byteBuffer(let buffer) = data, queue.isEmpty {
            context.write(wrapOutboundOut(buffer), promise: promise)
            return
        }
        queue.append((data, promise))
        if !reading { drain(context: context) }
    }

    func flush(context: ChannelHandlerContext) {
        if reading { flushPending = true }
        context.flush()
    }

    /// Writes what is queued, until a region needs a slice to go out before the next is read.
    private func drain(context: ChannelHandlerContext) {
        while let (data, promise) = queue.first {
            switch data {
            case .byteBuffer(let buffer):
                queue.removeFirst()
                context.write(wrapOutboundOut(buffer), promise: promise)
            case .fileRegion(var region):
                let slice: ByteBuffer
                do {
                    slice = try read(&region, allocator: context.channel.allocator)
                } catch {
                    queue.removeFirst()
                    promise?.fail(error)
                    context.close(promise: nil)
                    return
                }
                if region.readableBytes == 0 {
                    queue.removeFirst()
                    context.write(wrapOutboundOut(slice), promise: promise)
                    continue
                }
                queue[queue.startIndex] = (.fileRegion(region), promise)
                reading = true
                let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                context.writeAndFlush(wrapOutboundOut(slice)).whenComplete { result in
                    let (reader, context) = loopBound.value
                    reader.reading = false
                    if case .failure(let error) = result {
                        reader.failAll(error)
                        return
                    }
                    reader.drain(context: context)
                    if reader.flushPending && !reader.reading {
                        reader.flushPending = false
                        context.flush()
                    }
                }
                return
            }
        }
    }

    private func failAll(_ error: any Error) {
        while let (_, promise) = queue.popFirst() { promise?.fail(error) }
    }

    /// The next slice of `region`, which moves past it.
    private func read(_ region: inout FileRegion, allocator: ByteBufferAllocator) throws -> ByteBuffer {
        let count = min(region.readableBytes, Self.sliceSize)
        let scratch = Self.scratch.currentValue ?? Scratch()
        Self.scratch.currentValue = scratch
        var buffer = scratch.buffer
        scratch.buffer = ByteBuffer()
        if buffer.capacity >= count {
            buffer.clear()
        } else {
            buffer = allocator.buffer(capacity: Swift.max(count, 64 << 10))
        }
        defer { scratch.buffer = buffer }
        let offset = region.readerIndex
        try region.fileHandle.withUnsafeFileDescriptor { descriptor in
            var done = 0
            while done < count {
                var read = 0
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: count - done) { pointer in
                    read = pread(descriptor, pointer.baseAddress, count - done, off_t(offset + done))
                    return max(0, read)
                }
                if read < 0 && errno == EINTR { continue }
                guard read > 0 else {
                    throw IOError(errnoCode: read < 0 ? errno : EIO, reason: "reading a stored body for TLS")
                }
                done += read
            }
        }
        region.moveReaderIndex(forwardBy: count)
        return buffer
    }
}
