import Crypto
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL
import SwiftASN1
import X509

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The TLS server side of interception: for each host a client asks for, a leaf certificate
/// issued by a ``CertificateAuthority`` on first use, all on one process-wide P-256 key, and a
/// TLS context that shows it.
///
/// A context is made per `CONNECT` destination (clients send no SNI for an IP address, so the
/// host they connected to names the certificate); a client whose SNI names another host gets
/// that host's certificate during the handshake — once the caller's vetting has confirmed the
/// destination really is that host (its own certificate verifies for the name). Both are kept
/// in least-recently-used tables, and clients asking for the same new host at once share one
/// mint. Only `http/1.1` is offered by ALPN.
public final class InterceptionCertificates: Sendable {
    /// The authority that issues the certificates.
    public let authority: CertificateAuthority
    private let leafKey: P256.Signing.PrivateKey
    private let leafKeyForTLS: NIOSSLPrivateKey
    private let validity: Duration
    private let contexts: MintedTable<NIOSSLContext>
    private let certificates: MintedTable<NIOSSLCertificate>
    private let mints = NIOLockedValueBox(0)

    /// Creates an empty set of certificates.
    /// - Parameters:
    ///   - authority: the issuer.
    ///   - validity: each leaf's lifetime (never past the authority's).
    ///   - capacity: hosts whose certificates are kept (TLS contexts: at most 256 destinations).
    public init(authority: CertificateAuthority, validity: Duration = .seconds(180 * 86_400), capacity: Int = 1000)
        throws
    {
        self.authority = authority
        self.leafKey = P256.Signing.PrivateKey()
        self.leafKeyForTLS = try NIOSSLPrivateKey(bytes: Array(leafKey.pemRepresentation.utf8), format: .pem)
        self.validity = validity
        // A TLS context (an SSL_CTX) weighs more than a certificate: keep fewer; one made again
        // for a host whose certificate is kept costs no mint.
        self.contexts = MintedTable(capacity: min(capacity, 256))
        self.certificates = MintedTable(capacity: capacity)
    }

    /// Hosts whose certificates are kept now.
    public var count: Int { certificates.count }

    /// Certificates issued so far.
    public var minted: Int { mints.withLockedValue { $0 } }

    /// Confirms that a tunnel's destination is the host a client names in its SNI (fails
    /// otherwise), before a certificate for that name is shown.
    public typealias ServerNameVetting =
        @Sendable (_ serverName: String, _ eventLoop: any EventLoop) -> EventLoopFuture<Void>

    /// The TLS context for a tunnel to `host`:`port` (the `CONNECT` destination): made and its
    /// certificate minted on first use, coalesced with others asking for the same destination.
    /// A client whose SNI names another host gets a certificate for that name only once
    /// `vetting` succeeds for it (without vetting, always); otherwise its handshake fails.
    public func serverContext(
        for host: String, port: Int = 443, on eventLoop: any EventLoop, vetting: ServerNameVetting? = nil
    ) -> EventLoopFuture<NIOSSLContext> {
        let host = Self.normalized(host)
        return contexts.value(for: "\(host):\(port)", on: eventLoop) { [self] in
            var configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: [.certificate(try certificate(forNormalized: host))],
                privateKey: .privateKey(leafKeyForTLS))
            configuration.applicationProtocols = ["http/1.1"]
            configuration.minimumTLSVersion = .tlsv12
            configuration.shutdownTimeout = .seconds(1)
            configuration.sslContextCallback = { [self] hello, promise in
                guard let sni = hello.serverHostname.map(Self.normalized), sni != host else {
                    promise.succeed(.noChanges)
                    return
                }
                let loop = promise.futureResult.eventLoop
                let vetted = vetting?(sni, loop) ?? loop.makeSucceededVoidFuture()
                vetted.flatMap { self.certificates.value(for: sni, on: loop) { try self.mint(sni) } }
                    .map { certificate in
                        var change = NIOSSLContextConfigurationOverride()
                        change.certificateChain = [.certificate(certificate)]
                        change.privateKey = .privateKey(self.leafKeyForTLS)
                        return change
                    }
                    .cascade(to: promise)
            }
            return try NIOSSLContext(configuration: configuration)
        }
    }

    /// A newly issued leaf certificate for `host`, in the form TLS uses (what a mint costs:
    /// the benchmark times this).
    public func mint(_ host: String) throws -> NIOSSLCertificate {
        let certificate = try authority.issueServerCertificate(
            for: host, publicKey: leafKey.publicKey, validity: validity)
        mints.withLockedValue { $0 += 1 }
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
    }

    /// The leaf certificate for `host` as issued (tests read its names and dates).
    public func issuedCertificate(for host: String) throws -> Certificate {
        let der = try certificate(forNormalized: Self.normalized(host)).toDERBytes()
        return try Certificate(derEncoded: der)
    }

    private func certificate(forNormalized host: String) throws -> NIOSSLCertificate {
        try certificates.value(for: host) { try mint(host) }
    }

    /// Lower case, without brackets or a trailing dot.
    static func normalized(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}

/// Values made once per host and kept for the most recently used hosts; callers that ask for
/// a host being made wait for that one instead of making their own.
final class MintedTable<Value: Sendable>: Sendable {
    private struct State {
        var values: [String: (value: Value, lastUse: UInt64)] = [:]
        var inProgress: [String: [EventLoopPromise<Value>]] = [:]
        var clock: UInt64 = 0
    }

    private enum Next {
        case ready(Value)
        case wait(EventLoopFuture<Value>)
        case make
    }

    private let state = NIOLockedValueBox(State())
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { state.withLockedValue { $0.values.count } }

    /// The value for `key`, made now by `make` if no one has it or is making it.
    func value(for key: String, on eventLoop: any EventLoop, make: () throws -> Value) -> EventLoopFuture<Value> {
        let next = state.withLockedValue { state -> Next in
            state.clock += 1
            if let kept = state.values[key] {
                state.values[key]?.lastUse = state.clock
                return .ready(kept.value)
            }
            if state.inProgress[key] != nil {
                let promise = eventLoop.makePromise(of: Value.self)
                state.inProgress[key]!.append(promise)
                return .wait(promise.futureResult)
            }
            state.inProgress[key] = []
            return .make
        }
        switch next {
        case .ready(let value): return eventLoop.makeSucceededFuture(value)
        case .wait(let future): return future
        case .make: break
        }
        let result = Result { try make() }
        let waiters = state.withLockedValue { state -> [EventLoopPromise<Value>] in
            if case .success(let value) = result {
                if state.values.count >= capacity { evictOldest(&state) }
                state.values[key] = (value, state.clock)
            }
            return state.inProgress.removeValue(forKey: key) ?? []
        }
        for waiter in waiters { waiter.completeWith(result) }
        return eventLoop.makeCompletedFuture(result)
    }

    /// The value for `key`, made now by `make` unless kept (no coalescing: for callers that
    /// cannot wait).
    func value(for key: String, make: () throws -> Value) throws -> Value {
        if let kept = state.withLockedValue({ $0.values[key]?.value }) { return kept }
        let value = try make()
        state.withLockedValue { state in
            state.clock += 1
            if state.values.count >= capacity { evictOldest(&state) }
            state.values[key] = (value, state.clock)
        }
        return value
    }

    /// Drops the least recently used tenth (at least one), so that eviction is rare.
    private func evictOldest(_ state: inout State) {
        let dropped = max(1, state.values.count / 10)
        for key in state.values.sorted(by: { $0.value.lastUse < $1.value.lastUse }).prefix(dropped).map(\.key) {
            state.values.removeValue(forKey: key)
        }
    }
}
