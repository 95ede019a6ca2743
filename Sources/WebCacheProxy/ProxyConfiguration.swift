#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a ``CachingProxy`` listens, where it forwards, and its limits.
public struct ProxyConfiguration: Sendable {
    /// The address to listen on; loopback unless set explicitly.
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int
    /// Reverse mode: every request goes to this origin (`http://127.0.0.1:8000`). Forward mode
    /// when `nil`: requests carry absolute URLs (`GET http://host/path`), and `CONNECT` is
    /// tunnelled.
    public var upstream: URL?
    /// Forward mode: the destination hosts allowed (host names or suffixes), for requests and
    /// `CONNECT` tunnels alike; empty allows all.
    public var allowedDestinations: [String]
    /// The largest request body accepted (413 beyond; a chunked body that passes it while it is
    /// sent to the origin fails that exchange, with nothing past the limit sent, and is answered
    /// 413 too, its connection closed). No limit by default:
    /// bodies from ``streamsRequestBodiesFrom`` bytes on are never held whole.
    public var maximumRequestBodySize: Int
    /// The most bytes of request bodies held in memory at once, over all connections: a body
    /// below ``streamsRequestBodiesFrom`` (or of a GET or HEAD) is held whole until its request
    /// is answered. A request whose body would take more is answered 503 with `Retry-After: 1`
    /// (413 when it could never fit) and its connection closed. 256 MiB by default.
    public var maximumBufferedRequestBodies: Int = 256 << 20
    /// The size from which a request body (of any method but GET and HEAD, which the cache may
    /// answer) is sent to the origin as it arrives instead of held whole: an upload of any size
    /// then holds at most about 256 KiB of the proxy's memory, and the client is read only as
    /// fast as the origin takes it. A body that declares this length or more streams from its
    /// head; a chunked one once this much of it has come. Smaller bodies are held whole, so that
    /// a request that meets a kept-alive connection the origin has just closed can be sent
    /// again. 1 MiB by default.
    public var streamsRequestBodiesFrom: Int = 1 << 20
    /// The largest request head accepted: request line and fields (431 beyond). The HTTP parser
    /// itself refuses heads past 80 KiB.
    public var maximumHeaderSize: Int
    /// How long a connection may stay quiet (no request, no bytes through a tunnel) before it is
    /// closed.
    public var idleTimeout: Duration
    /// How long a request head may take to arrive once its first bytes have: a client that
    /// trickles its head (slowloris) gets 408 and is closed.
    public var requestHeadTimeout: Duration = .seconds(20)
    /// How long to wait for a `CONNECT` destination to accept the connection.
    public var connectTimeout: Duration
    /// The most connections open at once; more are answered 503 and closed.
    public var maximumConnections: Int
    /// On shutdown, how long requests in flight may take to finish before their connections are
    /// closed anyway.
    public var drainTimeout: Duration
    /// The path that answers the proxy's metrics in Prometheus text format (for origin-form
    /// requests, in both modes); `nil` turns it off.
    public var metricsPath: String?
    /// The name written in `Via`.
    public var viaName: String
    /// Forward mode: HTTPS inside `CONNECT` tunnels is opened and cached (see
    /// ``TLSInterception``); `nil` tunnels it byte for byte.
    public var tlsInterception: TLSInterception?
    /// Whether a fresh answer is kept, encoded, for a request head seen in the last second, and
    /// sent again for the same head while the engine confirms it stands (up to 16 MiB of memory
    /// and 32 MiB of files). Heads are the same byte for byte, except the fields each client sends its own
    /// way and no cached answer is chosen by (`User-Agent`, `Cookie`, `Referer`, tracing ids…),
    /// unless the response's `Vary` or the cache's policy reads them: it pays wherever clients
    /// ask for the same things (browsers on a shared proxy, health checks, an app polling);
    /// where every request is for something new, only the check remains.
    public var replaysAnswers = true

    /// Creates a configuration listening on 127.0.0.1.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, upstream: URL? = nil, allowedDestinations: [String] = [],
        maximumRequestBodySize: Int = .max, maximumHeaderSize: Int = 32 << 10, idleTimeout: Duration = .seconds(60),
        connectTimeout: Duration = .seconds(10), maximumConnections: Int = 1024, drainTimeout: Duration = .seconds(10),
        metricsPath: String? = "/_webcache/metrics", viaName: String = "webcache"
    ) {
        self.host = host
        self.port = port
        self.upstream = upstream
        self.allowedDestinations = allowedDestinations
        self.maximumRequestBodySize = maximumRequestBodySize
        self.maximumHeaderSize = maximumHeaderSize
        self.idleTimeout = idleTimeout
        self.connectTimeout = connectTimeout
        self.maximumConnections = maximumConnections
        self.drainTimeout = drainTimeout
        self.metricsPath = metricsPath
        self.viaName = viaName
    }
}
