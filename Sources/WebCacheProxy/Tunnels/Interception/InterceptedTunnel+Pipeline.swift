import NIOCore
import NIOHTTP1
import NIOSSL

extension InterceptedTunnel {
    /// The handler that takes over an intercepted tunnel once it is established: TLS (answered
    /// with `tls`, then HTTP served by a ``ProxyHTTPHandler`` for this destination) when the
    /// client's first bytes are a TLS handshake, a byte-for-byte tunnel to `destination`
    /// otherwise.
    static func sniffer(proxy: CachingProxy, destination: TunnelDestination, tls: NIOSSLContext) -> TunnelSniffer {
        let tunnel = InterceptedTunnel(host: destination.host, port: destination.port)
        return TunnelSniffer(
            intercept: { context in
                // TLS ends with close_notify: a TCP half-close is the end (otherwise TLS, having
                // sent its close_notify, would wait out its shutdown timeout for one that never
                // comes, holding the connection).
                try context.channel.syncOptions?.setOption(.allowRemoteHalfClosure, value: false)
                let pipeline = context.pipeline.syncOperations
                try pipeline.addHandler(NIOSSLServerHandler(context: tls), position: .after(context.handler))
                let server = try pipeline.handler(type: NIOSSLServerHandler.self)
                try pipeline.addHandler(FileRegionReader(), position: .after(server))
                let reader = try pipeline.handler(type: FileRegionReader.self)
                try pipeline.addHandler(ProxyHTTPHandler(proxy: proxy, tunnel: tunnel), position: .after(reader))
                proxy.metrics.interceptedTunnels.increment()
            },
            passThrough: { context, sniffer in
                let loopBound = NIOLoopBound((context, sniffer), eventLoop: context.eventLoop)
                proxy.connectTunnel(to: destination, on: context.eventLoop).whenComplete { result in
                    let (context, sniffer) = loopBound.value
                    guard case .success(let upstream) = result, context.channel.isActive else {
                        if case .success(let upstream) = result { upstream.close(promise: nil) }
                        context.close(promise: nil)
                        return
                    }
                    do {
                        let (client, server) = TunnelHandler.pair()
                        try context.pipeline.syncOperations.addHandler(client, position: .after(sniffer))
                        try upstream.pipeline.syncOperations.addHandler(server)
                        sniffer.release(context: context)
                        proxy.metrics.tunnels.increment()
                    } catch {
                        upstream.close(promise: nil)
                        context.close(promise: nil)
                    }
                }
            })
    }
}
