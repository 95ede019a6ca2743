import HTTPCaching
import HTTPWire
import NIOHTTP1
import WebCacheTLS

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A proxy's HTTPS interception at work: the configuration and the checks of the hosts'
/// own certificates.
struct Interception: Sendable {
    let settings: TLSInterception
    let verification: UpstreamVerification

    var certificates: InterceptionCertificates { settings.certificates }

    /// Interception for `configuration`, or why it cannot run: only in forward mode, and a proxy
    /// that listens beyond loopback must name the hosts it intercepts.
    static func make(for configuration: ProxyConfiguration) -> (Interception?, String?) {
        guard let settings = configuration.tlsInterception else { return (nil, nil) }
        guard configuration.upstream == nil else {
            return (nil, "HTTPS interception is for forward mode; a reverse proxy has no CONNECT tunnels")
        }
        if settings.hosts.isEmpty && !NetworkExposure.isLoopback(configuration.host) {
            return (
                nil,
                "HTTPS interception on \(configuration.host), beyond loopback, needs the hosts to intercept (--intercept-host): every client of the proxy would see every site's traffic"
            )
        }
        do {
            return (
                Interception(
                    settings: settings,
                    verification: try UpstreamVerification(
                        interception: settings, timeout: settings.verificationTimeout)), nil
            )
        } catch {
            return (nil, "cannot set up TLS to check origins' certificates: \(error)")
        }
    }
}

/// A configuration the proxy cannot run with, thrown by ``CachingProxy/run()`` before it listens.
public struct ProxyConfigurationError: CodedError {
    /// The codes of this error: static members of `ErrorCode` where `Domain` is this type, declared
    /// below. More may be added.
    public typealias Code = ErrorCode<ProxyConfigurationError>

    /// What kind of problem this is.
    public var code: Code
    /// What is wrong, in words.
    public var message: String
    /// The underlying error (none so far).
    public var cause: (any Error)?

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension ErrorCode where Domain == ProxyConfigurationError {
    /// HTTPS interception would be open to more than this machine without a list of hosts.
    public static var unsafeInterception: Self { Self("unsafeInterception") }
}

/// The destination of an intercepted tunnel, which the requests inside it must name.
package struct InterceptedTunnel: Sendable {
    /// The host, as in the `CONNECT` (without brackets).
    package let host: String
    package let port: Int
    /// `host[:port]` as a URL writes it, the port left out when it is 443.
    package let authority: String

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
        let bracketed = host.contains(":") ? "[\(host)]" : host
        self.authority = port == 443 ? bracketed : "\(bracketed):\(port)"
    }

    /// Why `head` may not go through this tunnel: a `Host` naming another authority (a request
    /// smuggled to another site under this one's certificate).
    func hostProblem(_ head: RequestHead) -> String? {
        guard let host = head.host else { return nil }
        guard names(host) else { return "the Host \(host) is not the tunnel's destination \(authority)" }
        return nil
    }

    /// Whether `authority` (a `Host` field, or a URL's) names this tunnel's destination.
    private func names(_ text: String) -> Bool {
        let text = text.lowercased()
        return text == authority.lowercased() || text == "\(authority.lowercased()):443" && port == 443
    }

    /// The `https://` URL a request target inside the tunnel stands for: origin-form, or an
    /// absolute `https` URL of this destination.
    func url(for target: String) -> URL? {
        if target.hasPrefix("/") { return URL(string: "https://\(authority)\(target)") }
        guard let url = URL(string: target), url.scheme?.lowercased() == "https", let host = url.host else {
            return nil
        }
        let port = url.port ?? 443
        guard port == self.port, host.lowercased().filter({ $0 != "[" && $0 != "]" }) == self.host.lowercased() else {
            return nil
        }
        return url
    }
}
