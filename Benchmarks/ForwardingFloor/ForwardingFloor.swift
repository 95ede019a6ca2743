import ArgumentParser
import NIOCore
import NIOHTTP1
import NIOPosix

/// The least a reverse proxy on SwiftNIO does for a request it forwards: parse the client's
/// request, send it on a kept-alive origin connection (one per client connection), parse the
/// response and write it back; nothing stored, no cache decision, no Swift task. A measuring
/// stick for `scripts/bench-miss-floor.sh`, not a proxy: GET and HEAD only, no hop-by-hop
/// handling, no limits, no error answers (a failure closes the connection).
///
/// With `--decoder none` neither leg is parsed by SwiftNIO's HTTP/1 codec: a request is its
/// bytes up to CRLF CRLF, sent on as they came, and a response its head plus `Content-Length`
/// bytes, sent back as they come — what is left is SwiftNIO's channels and the system calls.
@main
struct ForwardingFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forwarding-floor",
        abstract: "Forward HTTP/1.1 requests to one origin with SwiftNIO alone (a benchmark's floor).")

    @Option(help: "The port to listen on, on 127.0.0.1.")
    var port: Int = 8010

    @Option(help: "The origin's port, on 127.0.0.1.")
    var upstream: Int = 9000

    @Option(help: "How messages are read: nio (SwiftNIO's HTTP/1 codec) or none (byte searches).")
    var decoder: String = "nio"

    func validate() throws {
        guard ["nio", "none"].contains(decoder) else { throw ValidationError("--decoder is nio or none") }
    }

    func run() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let upstream = self.upstream
        let raw = decoder == "none"
        let server = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if raw {
                        try channel.pipeline.syncOperations.addHandler(RawClientSide(upstream: upstream))
                    } else {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: false)
                        try channel.pipeline.syncOperations.addHandler(ClientSide(upstream: upstream))
                    }
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

/// A client connection read as bytes: each whole head (the benchmark sends no bodies) goes to
/// this connection's origin connection as it came.
final class RawClientSide: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let upstream: Int
    private var origin: (any Channel)?
    private var pending = ByteBuffer()

    init(upstream: Int) {
        self.upstream = upstream
    }

    func channelActive(context: ChannelHandlerContext) {
        let client = context.channel
        ClientBootstrap(group: context.eventLoop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(RawOriginSide(client: client))
                }
            }
            .connect(host: "127.0.0.1", port: upstream)
            .assumeIsolated()
            .whenComplete { result in
                switch result {
                case .success(let origin):
                    self.origin = origin
                    client.closeFuture.whenComplete { _ in origin.close(promise: nil) }
                    self.forwardWholeHeads()
                case .failure:
                    client.close(promise: nil)
                }
            }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        forwardWholeHeads()
    }

    private func forwardWholeHeads() {
        guard let origin else { return }
        var forwarded = false
        while let length = pending.withUnsafeReadableBytes({ RawHTTP.headLength(in: $0) }) {
            origin.write(pending.readSlice(length: length)!, promise: nil)
            forwarded = true
        }
        if forwarded { origin.flush() }
        if pending.readableBytes == 0 { pending.clear() }
    }
}

/// An origin connection read as bytes: each response's head and its `Content-Length` bytes go
/// to the client connection as they come.
final class RawOriginSide: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let client: any Channel
    private var pending = ByteBuffer()
    /// Body bytes of the current response still to come.
    private var bodyLeft = 0

    init(client: any Channel) {
        self.client = client
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        while pending.readableBytes > 0 {
            if bodyLeft > 0 {
                let count = min(bodyLeft, pending.readableBytes)
                client.write(pending.readSlice(length: count)!, promise: nil)
                bodyLeft -= count
                continue
            }
            guard let length = pending.withUnsafeReadableBytes({ RawHTTP.headLength(in: $0) }) else { break }
            let head = pending.readSlice(length: length)!
            bodyLeft = head.withUnsafeReadableBytes { RawHTTP.contentLength(in: $0) } ?? 0
            client.write(head, promise: nil)
        }
        if pending.readableBytes == 0 { pending.clear() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        client.flush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        client.close(promise: nil)
        context.fireChannelInactive()
    }
}

/// Byte searches that stand in for an HTTP parser in the raw floor.
enum RawHTTP {
    /// The length of the head at the start of `bytes`, through CRLF CRLF, once it has come.
    static func headLength(in bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// The value of `Content-Length` in a head, in any case.
    static func contentLength(in head: UnsafeRawBufferPointer) -> Int? {
        let name = Array("\ncontent-length:".utf8)
        guard head.count > name.count else { return nil }
        for start in 0...(head.count - name.count)
        where (0..<name.count).allSatisfy({
            head[start + $0] | (head[start + $0] >= 65 && head[start + $0] <= 90 ? 0x20 : 0) == name[$0]
        }) {
            var index = start + name.count
            while index < head.count, head[index] == 32 { index += 1 }
            var value = 0
            while index < head.count, head[index] >= 48, head[index] <= 57 {
                value = value * 10 + Int(head[index] - 48)
                index += 1
            }
            return value
        }
        return nil
    }
}
