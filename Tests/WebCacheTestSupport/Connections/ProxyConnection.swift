import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import WebCacheProxy

/// One client connection to a ``WebCacheProxy/CachingProxy`` without a socket: request bytes
/// go in, the bytes the proxy writes come out, and the connection's clock moves only when the
/// test moves it (``advanceTime(by:)``). The proxy's own handlers serve it, as for a connection
/// ``WebCacheProxy/CachingProxy/run()`` accepts.
public final class ProxyConnection: Sendable {
    /// The channel the proxy serves.
    public let channel: NIOAsyncTestingChannel
    /// Everything the proxy has written so far, write by write.
    private let received = NIOLockedValueBox([[UInt8]]())

    private init(channel: NIOAsyncTestingChannel) {
        self.channel = channel
    }

    /// A connection from `client` (loopback unless said) served by `proxy`.
    public static func open(
        to proxy: CachingProxy, from client: SocketAddress? = nil
    ) async throws -> ProxyConnection {
        let channel = NIOAsyncTestingChannel()
        try await channel.testingEventLoop.executeInContext {
            try proxy.serve(channel)
            try channel.pipeline.syncOperations.addHandler(FileRegionCopier(), position: .first)
        }
        try await channel.connect(to: client ?? SocketAddress(ipAddress: "127.0.0.1", port: 50_000))
        return ProxyConnection(channel: channel)
    }

    /// Sends `text` as the client's next bytes.
    public func send(_ text: String) async throws {
        try await send(Array(text.utf8))
    }

    /// Sends `bytes` as the client's next bytes.
    public func send(_ bytes: [UInt8]) async throws {
        try await channel.writeInbound(ByteBuffer(bytes: bytes))
    }

    /// The client half-closes: it will send nothing more, but still reads.
    public func closeInput() async throws {
        try await channel.testingEventLoop.executeInContext {
            self.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
    }

    /// Moves the connection's clock on, running the timers that fall due.
    public func advanceTime(by amount: TimeAmount) async {
        await channel.testingEventLoop.advanceTime(by: amount)
    }

    /// Whether the proxy has closed the connection.
    public var isClosed: Bool {
        get async throws {
            try await channel.testingEventLoop.executeInContext { !self.channel.isActive }
        }
    }

    /// Everything the proxy has written so far.
    public func written() async throws -> [UInt8] {
        try await writes().flatMap { $0 }
    }

    /// Everything the proxy has written so far, one element per write it made (a buffer or a
    /// file region; empty writes left out).
    public func writes() async throws -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        while let data = try await channel.readOutbound(as: IOData.self) {
            switch data {
            case .byteBuffer(let buffer):
                pieces.append(Array(buffer.readableBytesView))
            case .fileRegion(let region):
                pieces.append(try FileRegionCopier.bytes(of: region))
            }
        }
        return received.withLockedValue {
            $0 += pieces.filter { !$0.isEmpty }
            return $0
        }
    }

    /// Waits (on the wall clock, at most `timeout`: generous, as a test run's first seconds keep
    /// both cores busy) until the proxy has written `count` final
    /// responses in all or closed the connection, and returns everything it wrote, read as
    /// responses to requests of `methods` (`GET` for any beyond them), with whether it closed.
    public func responses(
        _ count: Int, methods: [String] = [], timeout: Duration = .seconds(30)
    ) async throws -> (responses: [ResponseReader.Response], closed: Bool) {
        let deadline = ContinuousClock.now + timeout
        while true {
            await channel.testingEventLoop.run()
            let closed = try await isClosed
            let bytes = try await written()
            let read = try ResponseReader.read(bytes, methods: methods, closed: closed)
            if read.responses.filter({ $0.status >= 200 }).count >= count || closed || ContinuousClock.now >= deadline {
                return (read.responses, closed)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Sends `request` (one whole request, answered with a final response whose body is read as
    /// a `GET`'s) and returns its answer: the first final response after those the proxy had
    /// written before it. Throws when none comes within `timeout`.
    public func answer(to request: String, timeout: Duration = .seconds(30)) async throws -> ResponseReader.Response {
        let answeredBefore = try await finalResponses(0, timeout: .zero).count
        try await send(request)
        let answers = try await finalResponses(answeredBefore + 1, timeout: timeout)
        guard answers.count > answeredBefore else { throw NoAnswer(request: request) }
        return answers[answeredBefore]
    }

    /// No final response came to a request (``answer(to:timeout:)``).
    public struct NoAnswer: Error, CustomStringConvertible {
        /// The request, as sent.
        public var request: String

        public var description: String { "no answer to \(request.debugDescription)" }
    }

    private func finalResponses(_ count: Int, timeout: Duration) async throws -> [ResponseReader.Response] {
        try await responses(count, timeout: timeout).responses.filter { $0.status >= 200 }
    }

    /// Runs the work the connection's loop is given for `duration` on the wall clock: what a
    /// task does after its answer's last write (the connection takes its next step then) is done
    /// before the test moves the clock.
    public func settle(for duration: Duration = .milliseconds(30)) async {
        let end = ContinuousClock.now + duration
        repeat {
            await channel.testingEventLoop.run()
            try? await Task.sleep(for: .milliseconds(2))
        } while ContinuousClock.now < end
        await channel.testingEventLoop.run()
    }

    /// Closes the connection from the client's side, if the proxy has not.
    public func close() async {
        try? await channel.close()
        await channel.testingEventLoop.run()
    }
}

/// Reads file regions the proxy writes into bytes as they are written, the way a socket sends
/// them before the write completes: the proxy may let go of the file once its write is done.
private final class FileRegionCopier: ChannelOutboundHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .fileRegion(let region) = unwrapOutboundIn(data) else {
            context.write(data, promise: promise)
            return
        }
        do {
            let bytes = try Self.bytes(of: region)
            context.write(wrapOutboundOut(.byteBuffer(ByteBuffer(bytes: bytes))), promise: promise)
        } catch {
            promise?.fail(error)
        }
    }

    /// The bytes of `region`, read at its offsets.
    static func bytes(of region: FileRegion) throws -> [UInt8] {
        try region.fileHandle.withUnsafeFileDescriptor { descriptor in
            var chunk = [UInt8](repeating: 0, count: region.readableBytes)
            let count = chunk.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress, region.readableBytes, off_t(region.readerIndex))
            }
            return Array(chunk.prefix(max(count, 0)))
        }
    }
}
