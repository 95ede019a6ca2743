import HTTPCaching
import HTTPTypes
import HTTPWire
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
    /// Where a `CONNECT` goes, if it may: forward mode only, `host:port`, an allowed destination.
    func tunnelDestination(for head: RequestHead) -> Result<TunnelDestination, ProxyRefusal> {
        guard configuration.upstream == nil else {
            return .failure(ProxyRefusal(response: .error(405, "CONNECT is only for forward mode")))
        }
        let target = head.uri
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]),
            (1...65535).contains(port)
        else {
            return .failure(ProxyRefusal(response: .error(400, "CONNECT needs host:port, not \(target)")))
        }
        var host = String(target[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, destinationAllowed(host: host) else {
            return .failure(ProxyRefusal(response: .error(403, "\(host) is not an allowed destination")))
        }
        return .success(TunnelDestination(host: host, port: port))
    }

    /// Connects to a tunnel's destination on the client connection's event loop. An exposed
    /// forward proxy resolves a destination name first, refuses it (``ProxyRefusal``, 403) when
    /// it resolves inside, and connects to the address it checked, so that a second lookup
    /// cannot answer differently.
    func connectTunnel(to destination: TunnelDestination, on eventLoop: any EventLoop) -> EventLoopFuture<any Channel> {
        let timeout = TimeAmount.nanoseconds(configuration.connectTimeout.nanoseconds)
        let bootstrap: @Sendable () -> ClientBootstrap = {
            ClientBootstrap(group: eventLoop).connectTimeout(timeout).channelOption(.tcpOption(.tcp_nodelay), value: 1)
        }
        guard mustResolve(destination.host) else {
            return bootstrap().connect(host: destination.host, port: destination.port)
        }
        let checked = eventLoop.makePromise(of: [String].self)
        checked.completeWithTask { await self.destinations.resolve(destination.host) }
        return checked.futureResult.flatMap { addresses in
            if addresses.contains(where: NetworkExposure.isInternal) {
                let refusal = ProxyResponse.error(
                    403,
                    "\(destination.host) resolves to this machine or a private network, which this proxy does not serve"
                )
                return eventLoop.makeFailedFuture(ProxyRefusal(response: refusal))
            }
            guard let first = addresses.first,
                let address = try? SocketAddress(ipAddress: first, port: destination.port)
            else {
                return bootstrap().connect(host: destination.host, port: destination.port)
            }
            return bootstrap().connect(to: address)
        }
    }
}

/// The destination of a `CONNECT` tunnel.
struct TunnelDestination: Sendable {
    var host: String
    var port: Int
}

/// A request the proxy answers itself with an error.
struct ProxyRefusal: Error {
    var response: ProxyResponse
}
