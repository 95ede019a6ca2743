import HTTPWire
import NIOCore
import NIOHTTP1
import NIOSSL
import WebCache
import WebCacheNIO

/// `CONNECT` tunnels: byte for byte, or intercepted (TLS answered here, requests served by a
/// handler of their own); WebSocket upgrades inside intercepted tunnels.
extension ProxyHTTPHandler {
    /// Connects to the destination of a `CONNECT`, then replaces the HTTP handlers by a tunnel.
    func openTunnel(context: ChannelHandlerContext, head: RequestHead) {
        let destination: TunnelDestination
        switch proxy.tunnelDestination(for: head) {
        case .success(let allowed):
            destination = allowed
        case .failure(let refused):
            refusal = refused.response
            respond(context: context, head: head)
            return
        }
        if let interception = proxy.interception, interception.settings.intercepts(destination.host) {
            openInterceptedTunnel(context: context, head: head, destination: destination, interception: interception)
        } else {
            connectTunnel(context: context, head: head, destination: destination)
        }
    }

    /// Connects to `destination`, then replaces the HTTP handlers by a byte-for-byte tunnel.
    fileprivate func connectTunnel(
        context: ChannelHandlerContext, head: RequestHead, destination: TunnelDestination
    ) {
        state.startConnectingTunnel()
        whenUpstreamConnects(proxy.connectTunnel(to: destination, on: context.eventLoop), context: context) {
            handler, context, result in
            switch result {
            case .success(let upstream):
                handler.state.tunnelConnected()
                handler.becomeTunnel(context: context, upstream: upstream)
            case .failure(let error):
                handler.state.tunnelFailed()
                handler.refusal =
                    (error as? ProxyRefusal)?.response
                    ?? .error(502, "cannot connect to \(destination.host):\(destination.port): \(error)")
                handler.respond(context: context, head: head)
            }
        }
    }

    /// Runs `body` on the connection's event loop once `connecting` completes, unless the client
    /// has gone by then: a connection made for a client that left is closed at once.
    private func whenUpstreamConnects(
        _ connecting: EventLoopFuture<any Channel>, context: ChannelHandlerContext,
        _ body: @escaping (ProxyHTTPHandler, ChannelHandlerContext, Result<any Channel, any Error>) -> Void
    ) {
        let loopBound = NIOLoopBound((self, context, body), eventLoop: context.eventLoop)
        connecting.whenComplete { result in
            let (handler, context, body) = loopBound.value
            guard context.channel.isActive else {
                if case .success(let upstream) = result { upstream.close(promise: nil) }
                return
            }
            body(handler, context, result)
        }
    }

    /// Replaces the HTTP handlers by a tunnel to `upstream`, after telling the client the tunnel
    /// is established (for a `CONNECT`; not for an upgrade, whose answer comes from upstream).
    fileprivate func becomeTunnel(context: ChannelHandlerContext, upstream: any Channel, established: Bool = true) {
        do {
            let (client, server) = TunnelHandler.pair()
            try upstream.pipeline.syncOperations.addHandler(server)
            // Bytes the client sent early go through as the handler leaves, without a
            // read-complete to flush them.
            try handOver(context: context, to: client, established: established) { upstream.flush() }
            proxy.metrics.tunnels.increment()
        } catch {
            proxy.logger.warning("could not set up a tunnel: \(error)")
            upstream.close(promise: nil)
            context.close(promise: nil)
        }
    }

    /// Leaves the connection to `handler`: adds it after this one, answers the `CONNECT` when
    /// `established`, hands it the bytes the client sent after the request (then `handedOn`
    /// runs), lets reading resume, and takes this handler out.
    private func handOver(
        context: ChannelHandlerContext, to handler: any ChannelHandler, established: Bool,
        handedOn: (() -> Void)? = nil
    ) throws {
        let pipeline = context.pipeline.syncOperations
        try pipeline.addHandler(handler, position: .after(self))
        if established {
            context.writeAndFlush(
                NIOAny(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")), promise: nil)
        }
        state.handedOver()
        handedOver = true
        let early = parser.takeUnparsedBytes()
        if early.readableBytes > 0 { context.fireChannelRead(NIOAny(early)) }
        handedOn?()
        context.read()
        pipeline.removeHandler(context: context, promise: nil)
    }

    /// Intercepts a tunnel: once the host's certificate has verified (or the host cannot be
    /// reached, so only stored answers can be served) and a certificate is ready for it,
    /// answers the `CONNECT` and waits for the client's first bytes (``TunnelSniffer``).
    fileprivate func openInterceptedTunnel(
        context: ChannelHandlerContext, head: RequestHead, destination: TunnelDestination,
        interception: Interception
    ) {
        state.startConnectingTunnel()
        let eventLoop = context.eventLoop
        let ready = interception.verification.verdict(for: destination, on: eventLoop).flatMap {
            verdict -> EventLoopFuture<NIOSSLContext?> in
            switch verdict {
            case .refused(let reason):
                let refusal = ProxyResponse.error(
                    502,
                    "will not open HTTPS to \(destination.host):\(destination.port): its certificate failed verification: \(reason)"
                )
                return eventLoop.makeFailedFuture(ProxyRefusal(response: refusal))
            case .notIntercepted:
                return eventLoop.makeSucceededFuture(nil)
            case .verified, .unreachable:
                return interception.certificates.serverContext(
                    for: destination.host, port: destination.port, on: eventLoop,
                    vetting: interception.verification.vetting(for: destination)
                ).map { $0 }
            }
        }
        let loopBound = NIOLoopBound((self, context), eventLoop: eventLoop)
        ready.whenComplete { result in
            let (handler, context) = loopBound.value
            guard context.channel.isActive else { return }
            switch result {
            case .success(let tls?):
                handler.state.tunnelConnected()
                handler.becomeInterceptedTunnel(context: context, destination: destination, tls: tls)
            case .success(nil):
                handler.state.tunnelFailed()
                handler.connectTunnel(context: context, head: head, destination: destination)
            case .failure(let error):
                handler.state.tunnelFailed()
                if let refused = error as? ProxyRefusal {
                    handler.proxy.metrics.interceptionRefusals.increment()
                    handler.refusal = refused.response
                } else {
                    handler.refusal = .error(502, "cannot make a certificate for \(destination.host): \(error)")
                }
                handler.respond(context: context, head: head)
            }
        }
    }

    fileprivate func becomeInterceptedTunnel(
        context: ChannelHandlerContext, destination: TunnelDestination, tls: NIOSSLContext
    ) {
        do {
            try handOver(
                context: context, to: InterceptedTunnel.sniffer(proxy: proxy, destination: destination, tls: tls),
                established: true)
        } catch {
            proxy.logger.warning("could not set up an intercepted tunnel: \(error)")
            context.close(promise: nil)
        }
    }

    /// Inside an intercepted tunnel, a WebSocket upgrade: connects to the destination over
    /// (verified) TLS, sends the request as it came, and splices the two; nothing is cached.
    func spliceUpgrade(context: ChannelHandlerContext, head: RequestHead) {
        guard let tunnel, let interception = proxy.interception else { return }
        state.startHandingOver()
        let destination = TunnelDestination(host: tunnel.host, port: tunnel.port)
        let connecting = interception.verification.connect(
            to: destination, on: context.eventLoop, timeout: proxy.configuration.connectTimeout)
        whenUpstreamConnects(connecting, context: context) { handler, context, result in
            switch result {
            case .success(let upstream):
                // The request as the client sent it, byte for byte.
                upstream.write(head.bytes, promise: nil)
                handler.becomeTunnel(context: context, upstream: upstream, established: false)
            case .failure(let error):
                handler.state.tunnelFailed()
                handler.refusal = .error(
                    502,
                    "cannot connect to \(tunnel.authority) for the upgrade: \(TLSFailure.reason(error) ?? "\(error)")")
                handler.respond(context: context, head: head)
            }
        }
    }
}
