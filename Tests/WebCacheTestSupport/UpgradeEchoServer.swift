import NIOCore
import NIOPosix
import NIOSSL

/// A TLS server that answers any request head with `101 Switching Protocols` and then echoes
/// every byte it receives prefixed with `echo:` — enough to see an upgrade spliced through.
public final class UpgradeEchoServer: Sendable {
    private let channel: any Channel
    /// The port it listens on (127.0.0.1).
    public let port: Int

    private init(channel: any Channel) {
        self.channel = channel
        self.port = channel.localAddress?.port ?? 0
    }

    /// Listens on a free port of 127.0.0.1.
    public static func start(tls: NIOSSLContext) async throws -> UpgradeEchoServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                    try channel.pipeline.syncOperations.addHandler(EchoAfterHead())
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return UpgradeEchoServer(channel: channel)
    }

    /// Stops listening.
    public func stop() async throws {
        try await channel.close()
    }

    private final class EchoAfterHead: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var head = ""
        private var upgraded = false

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            var text = bytes.readString(length: bytes.readableBytes) ?? ""
            if !upgraded {
                head += text
                guard let end = head.range(of: "\r\n\r\n") else { return }
                upgraded = true
                text = String(head[end.upperBound...])
                context.write(
                    wrapOutboundOut(
                        ByteBuffer(
                            string:
                                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
                    ), promise: nil)
            }
            if !text.isEmpty { context.write(wrapOutboundOut(ByteBuffer(string: "echo:" + text)), promise: nil) }
            context.flush()
        }
    }
}
