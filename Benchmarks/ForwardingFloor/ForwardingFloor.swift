import ArgumentParser
import NIOCore
import NIOHTTP1
import NIOPosix

/// The least a reverse proxy on SwiftNIO does for a request it forwards: parse the client's
/// request, send it on a kept-alive origin connection (one per client connection), parse the
/// response and write it back; nothing stored, no cache decision, no Swift task. A measuring
/// stick for `scripts/bench-miss-floor.sh`, not a proxy: GET and HEAD only, no hop-by-hop
/// handling, no limits, no error answers (a failure closes the connection).
@main
struct ForwardingFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forwarding-floor",
        abstract: "Forward HTTP/1.1 requests to one origin with SwiftNIO alone (a benchmark's floor).")

    @Option(help: "The port to listen on, on 127.0.0.1.")
    var port: Int = 8010

    @Option(help: "The origin's port, on 127.0.0.1.")
    var upstream: Int = 9000

    func run() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstream = self.upstream
        let server = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                    try channel.pipeline.syncOperations.addHandler(ClientSide(upstream: upstream))
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .wait()
        print("forwarding 127.0.0.1:\(port) to 127.0.0.1:\(upstream)")
        try server.closeFuture.wait()
    }
}

/// A client connection: each request goes to this connection's origin connection, made when the
/// client connects.
final class ClientSide: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let upstream: Int
    private var origin: (any Channel)?
    /// A request that came before the origin connection was up.
    private var waiting: HTTPRequestHead?
    private var head: HTTPRequestHead?

    init(upstream: Int) {
        self.upstream = upstream
    }

    func channelActive(context: ChannelHandlerContext) {
        let client = context.channel
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes)))
                    try channel.pipeline.syncOperations.addHandler(OriginSide(client: client))
                }
            }
            .connect(host: "127.0.0.1", port: upstream)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let origin):
                    self.origin = origin
                    client.closeFuture.whenComplete { _ in origin.close(promise: nil) }
                    if let waiting = self.waiting {
                        self.waiting = nil
                        self.forward(waiting)
                    }
                case .failure:
                    client.close(promise: nil)
                }
            }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            self.head = nil
            if origin == nil { waiting = head } else { forward(head) }
        }
    }

    private func forward(_ request: HTTPRequestHead) {
        guard let origin else { return }
        var head = request
        head.version = .http1_1
        head.headers.replaceOrAdd(name: "Host", value: "127.0.0.1:\(upstream)")
        origin.write(HTTPClientRequestPart.head(head), promise: nil)
        origin.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
    }
}

/// An origin connection: its response parts go to the client connection as they come.
final class OriginSide: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart

    private let client: any Channel

    init(client: any Channel) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            let response = HTTPResponseHead(version: .http1_1, status: head.status, headers: head.headers)
            client.write(HTTPServerResponsePart.head(response), promise: nil)
        case .body(let bytes):
            client.write(HTTPServerResponsePart.body(.byteBuffer(bytes)), promise: nil)
        case .end:
            client.writeAndFlush(HTTPServerResponsePart.end(nil), promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
        context.fireChannelInactive()
    }
}
