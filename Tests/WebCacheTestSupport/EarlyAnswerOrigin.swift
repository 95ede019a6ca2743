import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A server on 127.0.0.1 that answers a request before its body has all come, as an origin
/// refusing an upload (413, 401) does: once `answerAfter` bytes of a connection have arrived
/// (head included) it writes `response` and closes. It counts the bytes each connection sent,
/// so a test can see a body arrive while it is still being sent. With `stopReadingAfter`, it
/// reads nothing more of a connection past that many bytes (an origin that does not keep up),
/// and answers nothing. Stop it with ``stop()``.
public final class EarlyAnswerOrigin: Sendable {
    private let channels = ServedChannels()
    private let received = NIOLockedValueBox(0)
    private let answerAfter: Int
    private let response: [UInt8]
    private let stopReadingAfter: Int

    /// A stopped server that answers `response` (the whole response, as sent) once a
    /// connection has sent `answerAfter` bytes, or stops reading at `stopReadingAfter`.
    public convenience init(answerAfter: Int = .max, response: String = "", stopReadingAfter: Int = .max) {
        self.init(answerAfter: answerAfter, responseBytes: Array(response.utf8), stopReadingAfter: stopReadingAfter)
    }

    /// A stopped server that answers `responseBytes`, for responses that are not text (a coded
    /// body).
    public init(answerAfter: Int = .max, responseBytes: [UInt8], stopReadingAfter: Int = .max) {
        self.answerAfter = answerAfter
        self.response = responseBytes
        self.stopReadingAfter = stopReadingAfter
    }

    /// The port, once started.
    public var port: Int { channels.port }

    /// Bytes received so far, over all connections.
    public var bytesReceived: Int { received.withLockedValue { $0 } }

    /// Starts listening on a free port.
    public func start() async throws {
        let (answerAfter, response, received, stopReadingAfter) = (answerAfter, response, received, stopReadingAfter)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [channels] channel in
                channels.track(channel)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        Answering(
                            answerAfter: answerAfter, response: response, received: received,
                            stopReadingAfter: stopReadingAfter))
                }
            }
        channels.listen(on: try await bootstrap.bind(host: "127.0.0.1", port: 0).get())
    }

    /// Stops listening and closes every connection.
    public func stop() async throws {
        try await channels.closeAll()
    }

    /// The absolute URL of `path` on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    private final class Answering: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let answerAfter: Int
        let response: [UInt8]
        let received: NIOLockedValueBox<Int>
        let stopReadingAfter: Int
        var count = 0
        var answered = false

        init(answerAfter: Int, response: [UInt8], received: NIOLockedValueBox<Int>, stopReadingAfter: Int) {
            self.answerAfter = answerAfter
            self.response = response
            self.received = received
            self.stopReadingAfter = stopReadingAfter
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data).readableBytes
            count += bytes
            received.withLockedValue { $0 += bytes }
            if count >= stopReadingAfter {
                context.channel.setOption(.autoRead, value: false).whenComplete { _ in }
                return
            }
            guard !answered, count >= answerAfter else { return }
            answered = true
            let channel = context.channel
            context.writeAndFlush(NIOAny(ByteBuffer(bytes: response))).whenComplete { _ in
                channel.close(promise: nil)
            }
        }
    }
}
