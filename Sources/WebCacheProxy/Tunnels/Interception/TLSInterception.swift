import WebCache
import WebCacheNIO
import WebCacheTLS

/// How a forward proxy opens HTTPS: inside a `CONNECT` tunnel to an intercepted host it answers
/// the TLS handshake itself, with a certificate for that host from a local
/// `CertificateAuthority` (WebCacheTLS), and serves the requests inside like plain ones — from
/// the cache, keyed by their `https://` URLs. Clients must trust the authority's certificate.
///
/// Interception is opt-in, and only for hosts whose own certificate verifies against
/// ``upstreamTrust``: a host that fails gets its `CONNECT` refused with 502 and the reason, never
/// a certificate from this proxy. Other hosts, and tunnels whose first bytes are not TLS, pass
/// through byte for byte.
///
/// ```swift
/// let authority = try CertificateAuthority.load(orCreateIn: directory.appendingPathComponent("ca"))
/// var configuration = ProxyConfiguration(port: 0)
/// configuration.tlsInterception = try TLSInterception(authority: authority)
/// ```
public struct TLSInterception: Sendable {
    /// The certificates shown to clients.
    public var certificates: InterceptionCertificates
    /// The hosts intercepted (names, `*.domain` for sub-domains only, or a domain for it and its
    /// sub-domains); empty intercepts every host. A proxy listening beyond loopback needs a list.
    public var hosts: [String]
    /// What the origins' certificates are verified against (the same as the cache's origin
    /// client should use).
    public var upstreamTrust: OriginTrust
    /// How long a host whose certificate verified is not checked again before its tunnels are
    /// intercepted.
    public var verifiedFor: Duration = .seconds(3600)
    /// How long a host whose certificate failed is refused before it is checked again.
    public var refusedFor: Duration = .seconds(60)
    /// How long the check of a host's certificate may take; past it the host counts as
    /// unreachable (and the tunnel serves what the cache holds).
    public var verificationTimeout: Duration = .seconds(3)

    /// Intercepts `hosts` (all when empty) with certificates from `authority`.
    public init(authority: CertificateAuthority, hosts: [String] = [], upstreamTrust: OriginTrust = OriginTrust())
        throws
    {
        self.certificates = try InterceptionCertificates(authority: authority)
        self.hosts = hosts
        self.upstreamTrust = upstreamTrust
    }

    /// Whether tunnels to `host` are intercepted.
    public func intercepts(_ host: String) -> Bool {
        hosts.isEmpty || hosts.contains { HostPattern($0).matches(host) }
    }
}
