import NIOCore
import NIOHTTP1
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One client connection speaking HTTP/1.1: collects each request, hands it to the engine on a
/// task, and writes the answer back, streaming bodies that are still arriving. A `CONNECT`
/// turns the connection into a tunnel.
///
/// `HTTPServerPipelineHandler` in front of it delivers one request at a time and closes
/// gracefully on shutdown once the response in flight has ended.
final class ProxyHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let proxy: CachingProxy
    /// The HTTP handlers to take out when the connection becomes a tunnel.
    private let httpHandlers: HTTPHandlers
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var refusal: ProxyResponse?
    private var responding = false

    struct HTTPHandlers {
        var decoder: ByteToMessageHandler<HTTPRequestDecoder>
        var encoder: HTTPResponseEncoder
        var pipelining: HTTPServerPipelineHandler
        var errors: HTTPServerProtocolErrorHandler
    }

    init(proxy: CachingProxy, httpHandlers: HTTPHandlers) {
        self.proxy = proxy
        self.httpHandlers = httpHandlers
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body.clear()
            refusal = nil
            let size = Self.headSize(requestHead)
            if size > proxy.configuration.maximumHeaderSize {
                refusal = .error(431, "the request head is \(size) bytes; the limit is \(proxy.configuration.maximumHeaderSize)")
            }
        case .body(var chunk):
            guard refusal == nil else { return }
            if body.readableBytes + chunk.readableBytes > proxy.configuration.maximumRequestBodySize {
                refusal = .error(413, "the request body is larger than \(proxy.configuration.maximumRequestBodySize) bytes")
                body.clear()
            } else {
                body.writeBuffer(&chunk)
            }
        case .end:
            guard let requestHead = head else { return }
            head = nil
            if requestHead.method == .CONNECT && refusal == nil {
                openTunnel(context: context, head: requestHead)
            } else {
                respond(context: context, head: requestHead)
            }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            if !responding { context.close(promise: nil) }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        proxy.logger.debug("connection error: \(error)")
        context.close(promise: nil)
    }

    /// Runs the request through the engine on a task and writes the answer.
    private func respond(context: ChannelHandlerContext, head: HTTPRequestHead) {
        responding = true
        let requestBody = body
        body = ByteBuffer()
        let refusal = self.refusal
        let proxy = self.proxy
        let channel = context.channel
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.startTask {
            let response: ProxyResponse
            if let refusal {
                response = refusal
            } else {
                response = await proxy.respond(to: head, body: requestBody)
            }
            let keepAlive = head.isKeepAlive && refusal?.head.status.code != 431
            await proxy.write(response, to: channel, keepAlive: keepAlive, method: head.method)
            channel.eventLoop.execute {
                let (handler, context) = loopBound.value
                handler.responding = false
                if !keepAlive { context.close(promise: nil) }
            }
        }
    }

    /// Connects to the destination of a `CONNECT`, then replaces the HTTP handlers by a tunnel.
    private func openTunnel(context: ChannelHandlerContext, head: HTTPRequestHead) {
        let destination: TunnelDestination
        switch proxy.tunnelDestination(for: head) {
        case .success(let allowed):
            destination = allowed
        case .failure(let refused):
            refusal = refused.response
            respond(context: context, head: head)
            return
        }
        responding = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        proxy.connectTunnel(to: destination, on: context.eventLoop).whenComplete { result in
            let (handler, context) = loopBound.value
            switch result {
            case .success(let upstream):
                handler.becomeTunnel(context: context, upstream: upstream)
            case .failure(let error):
                handler.refusal = .error(502, "cannot connect to \(destination.host):\(destination.port): \(error)")
                handler.respond(context: context, head: head)
            }
        }
    }

    private func becomeTunnel(context: ChannelHandlerContext, upstream: any Channel) {
        let pipeline = context.pipeline.syncOperations
        do {
            // Handlers that expect HTTP messages go first, so that bytes the client already sent
            // after its CONNECT reach the tunnel as bytes.
            // These leave the pipeline at once; the decoder leaves on the next tick.
            pipeline.removeHandler(httpHandlers.pipelining, promise: nil)
            pipeline.removeHandler(httpHandlers.errors, promise: nil)
            pipeline.removeHandler(httpHandlers.encoder, promise: nil)
            let (client, server) = TunnelHandler.pair()
            try pipeline.addHandler(client)
            try upstream.pipeline.syncOperations.addHandler(server)
            context.writeAndFlush(NIOAny(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")), promise: nil)
            pipeline.removeHandler(context: context, promise: nil)
            // Bytes the client sent early come out of the decoder as it leaves, without a
            // read-complete to flush them.
            let decoderRemoved = context.eventLoop.makePromise(of: Void.self)
            decoderRemoved.futureResult.whenComplete { _ in upstream.flush() }
            pipeline.removeHandler(httpHandlers.decoder, promise: decoderRemoved)
            proxy.metrics.tunnels.increment()
        } catch {
            proxy.logger.warning("could not set up a tunnel: \(error)")
            upstream.close(promise: nil)
            context.close(promise: nil)
        }
    }

    /// The size of a request head as it came: request line and fields.
    static func headSize(_ head: HTTPRequestHead) -> Int {
        head.headers.reduce(head.uri.utf8.count + 16) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }
}
