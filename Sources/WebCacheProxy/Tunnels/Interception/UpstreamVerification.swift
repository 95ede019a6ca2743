import HTTPCaching
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import WebCache
import WebCacheNIO
import WebCacheTLS

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the proxy knows of an intercepted host's own certificate.
enum UpstreamVerdict: Sendable, Equatable {
    /// A TLS handshake with the host verified its certificate and name.
    case verified
    /// The host could not be reached, so nothing is known of its certificate; the tunnel is
    /// intercepted anyway, to serve what the cache holds (fetched over verified TLS).
    case unreachable(String)
    /// The host's certificate failed: its tunnels are refused, with this reason.
    case refused(String)
    /// The host does not complete a TLS handshake (it is not a TLS server, or speaks a TLS the
    /// proxy does not): its tunnels pass through byte for byte, as without interception.
    case notIntercepted(String)
}

/// Checks, before a tunnel is intercepted, that its host's certificate verifies: one TLS
/// handshake with the host (the same trust as the origin client), its verdict kept for a while
/// and shared by the tunnels that ask at once.
final class UpstreamVerification: Sendable {
    private struct Kept {
        var verdict: UpstreamVerdict
        var until: NIODeadline
    }

    private let context: NIOSSLContext
    private let verifiedFor: TimeAmount
    private let refusedFor: TimeAmount
    /// A host found unreachable is not tried again for this long (a silent network would
    /// otherwise cost every tunnel a timeout).
    private let unreachableFor: TimeAmount = .seconds(10)
    private let timeout: TimeAmount
    private let kept = NIOLockedValueBox(BoundedTable<String, Kept>(capacity: 4096))
    private let checking = NIOLockedValueBox([String: [EventLoopPromise<UpstreamVerdict>]]())

    init(interception: TLSInterception, timeout: Duration) throws {
        self.context = try NIOSSLContext(configuration: interception.upstreamTrust.clientConfiguration())
        self.verifiedFor = .nanoseconds(interception.verifiedFor.nanoseconds)
        self.refusedFor = .nanoseconds(interception.refusedFor.nanoseconds)
        self.timeout = .nanoseconds(timeout.nanoseconds)
    }

    /// The verdict on `destination`: kept, or checked now (one check at a time per host). The
    /// certificate must be for `serverName` when given (a client's SNI), else for the host.
    func verdict(for destination: TunnelDestination, serverName: String? = nil, on eventLoop: any EventLoop)
        -> EventLoopFuture<UpstreamVerdict>
    {
        let key = "\(destination.host.lowercased()):\(destination.port)" + (serverName.map { " as \($0)" } ?? "")
        let now = NIODeadline.now()
        if let known = kept.withLockedValue({ $0[key] }), known.until > now {
            return eventLoop.makeSucceededFuture(known.verdict)
        }
        let promise = eventLoop.makePromise(of: UpstreamVerdict.self)
        let first = checking.withLockedValue { checking -> Bool in
            if checking[key] != nil {
                checking[key]!.append(promise)
                return false
            }
            checking[key] = [promise]
            return true
        }
        guard first else { return promise.futureResult }
        handshake(with: destination, serverName: serverName, on: eventLoop).whenSuccess { verdict in
            let lifetime: TimeAmount
            switch verdict {
            case .verified: lifetime = self.verifiedFor
            case .refused, .notIntercepted: lifetime = self.refusedFor
            case .unreachable: lifetime = self.unreachableFor
            }
            self.kept.withLockedValue { kept in
                kept[key] = Kept(verdict: verdict, until: .now() + lifetime)
            }
            for waiter in self.checking.withLockedValue({ $0.removeValue(forKey: key) ?? [] }) {
                waiter.succeed(verdict)
            }
        }
        return promise.futureResult
    }

    /// Connects to `destination` and completes a TLS handshake that verifies its certificate
    /// (for `serverName`, or else the host).
    private func handshake(with destination: TunnelDestination, serverName: String?, on eventLoop: any EventLoop)
        -> EventLoopFuture<UpstreamVerdict>
    {
        let outcome = eventLoop.makePromise(of: UpstreamVerdict.self)
        let name = serverName ?? Self.serverName(of: destination)
        let context = self.context
        let timeout = self.timeout
        let deadline = eventLoop.scheduleTask(in: timeout) {
            outcome.succeed(.unreachable("no TLS handshake within \(timeout.nanoseconds / 1_000_000_000) s"))
        }
        outcome.futureResult.whenComplete { _ in deadline.cancel() }
        ClientBootstrap(group: eventLoop)
            .connectTimeout(timeout)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: name))
                    try channel.pipeline.syncOperations.addHandler(HandshakeOutcome(outcome, requiredName: serverName))
                }
            }
            .connect(host: destination.host, port: destination.port)
            .whenComplete { result in
                switch result {
                case .success(let channel):
                    outcome.futureResult.whenComplete { _ in channel.close(promise: nil) }
                case .failure(let error):
                    outcome.succeed(.unreachable(ConnectionErrors.failure(error) ?? "\(error)"))
                }
            }
        return outcome.futureResult
    }
}

/// Reports how a TLS handshake ended.
private final class HandshakeOutcome: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let outcome: EventLoopPromise<UpstreamVerdict>
    /// A name the certificate must list (NIOSSL also accepts an IP address name matching the
    /// connected address, which proves nothing about a client's SNI).
    private let requiredName: String?

    init(_ outcome: EventLoopPromise<UpstreamVerdict>, requiredName: String?) {
        self.outcome = outcome
        self.requiredName = requiredName
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            if let requiredName {
                let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLClientHandler.self)
                    .peerCertificate?.toDERBytes()
                outcome.succeed(
                    certificate.map { CertificateNames.certificate($0, names: requiredName) } == true
                        ? .verified : .refused("the certificate does not name \(requiredName)"))
            } else {
                outcome.succeed(.verified)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let reason = TLSFailure.certificateProblem(error) {
            outcome.succeed(.refused(reason))
        } else if let reason = TLSFailure.reason(error) {
            outcome.succeed(.notIntercepted(reason))
        } else if ConnectionErrors.dropped(error) {
            outcome.succeed(.notIntercepted("the connection closed during the TLS handshake (\(error))"))
        } else {
            outcome.succeed(.unreachable("\(error)"))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        outcome.succeed(.notIntercepted("the connection closed during the TLS handshake (not a TLS server?)"))
        context.fireChannelInactive()
    }
}

extension UpstreamVerification {
    /// The SNI for `destination`: its host, unless that is an address (which SNI cannot carry;
    /// the certificate is then checked against the connected address).
    static func serverName(of destination: TunnelDestination) -> String? {
        (try? SocketAddress(ipAddress: destination.host, port: 0)) == nil ? destination.host : nil
    }

    /// A TLS connection to `destination` whose certificate is verified, for a tunnel spliced
    /// through (a WebSocket upgrade).
    func connect(to destination: TunnelDestination, on eventLoop: any EventLoop, timeout: Duration) -> EventLoopFuture<
        any Channel
    > {
        let name = Self.serverName(of: destination)
        let context = self.context
        return ClientBootstrap(group: eventLoop)
            .connectTimeout(.nanoseconds(timeout.nanoseconds))
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: name))
                }
            }
            .connect(host: destination.host, port: destination.port)
    }
}

extension UpstreamVerification {
    /// Vetting for a client's SNI that names another host than the tunnel's destination: the
    /// destination's own certificate must verify for that name (otherwise the client would be
    /// shown a certificate for a host it is not talking to).
    func vetting(for destination: TunnelDestination) -> InterceptionCertificates.ServerNameVetting {
        { serverName, eventLoop in
            self.verdict(for: destination, serverName: serverName, on: eventLoop).flatMapThrowing { verdict in
                guard verdict == .verified else {
                    throw ServerNameRefused(serverName: serverName, destination: destination, verdict: verdict)
                }
            }
        }
    }
}

/// A client's SNI that the tunnel's destination could not be shown to serve.
struct ServerNameRefused: Error, CustomStringConvertible {
    var serverName: String
    var destination: TunnelDestination
    var verdict: UpstreamVerdict
    var description: String { "\(destination.host):\(destination.port) is not verified as \(serverName): \(verdict)" }
}
