import ArgumentParser
import Dispatch
import Foundation
import HTTPCaching
import HTTPTypes
import Logging
import NIOPosix
import WebCache
import WebCacheNIO
import WebCacheProxy
import WebCacheTLS

/// `webcache proxy`: a caching HTTP proxy (shared-cache rules) for any browser engine.
struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Run a caching HTTP/1.1 proxy: reverse with --upstream, forward without.",
        discussion: """
            Reverse: webcache proxy --listen 127.0.0.1:8080 --upstream http://127.0.0.1:8000
            Forward: webcache proxy --listen 127.0.0.1:3128 --allow-destination 127.0.0.1
            The proxy listens on loopback unless --listen names another address. It uses \
            shared-cache rules: private responses are never stored. In forward mode CONNECT \
            is tunnelled byte for byte (HTTPS passes through uncached) unless \
            --intercept-https: then the proxy answers TLS inside tunnels with certificates from \
            this cache's own authority (webcache ca prints it; clients must trust it), checks \
            each host's real certificate first (the system's roots and --cacert; a host that \
            fails gets 502, never a certificate), and caches HTTPS like HTTP. Metrics in Prometheus \
            text format at --metrics-path. On SIGINT/SIGTERM it stops accepting, lets requests \
            in flight finish (up to 10 s) and exits.
            Offline: forward mode serves one person's browser and is as offline-first as the \
            library (--offline-posture personal, --network-timeout 3): stored pages open when \
            the origin is unreachable or silent, whatever no-cache or must-revalidate say, within \
            offlineMaxStale. Reverse mode is shared by many users and follows RFC 9111 strictly \
            (--offline-posture shared, no network timeout).
            """)

    @OptionGroup var cache: CacheOptions
    @OptionGroup var network: NetworkOptions

    @Option(help: ArgumentHelp("Where to listen, HOST:PORT.", valueName: "address"))
    var listen: String = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("Reverse mode: the origin every request goes to.", valueName: "url"))
    var upstream: String?

    @Option(
        help: ArgumentHelp(
            "Forward mode: a destination host (or domain) allowed; repeatable. Without any, all are allowed.",
            valueName: "host"))
    var allowDestination: [String] = []

    @Option(
        help: ArgumentHelp("A targeted cache-control field obeyed over Cache-Control (RFC 9213).", valueName: "field"))
    var targetField: String = "CDN-Cache-Control"

    @Option(
        help: ArgumentHelp(
            "Seconds an upstream exchange may take before the client gets 504 (or a stale response).",
            valueName: "seconds"))
    var upstreamTimeout: Int = 60

    @Option(
        help: ArgumentHelp(
            "Seconds a client connection or tunnel may stay quiet before it is closed.", valueName: "seconds"))
    var idleTimeout: Int = 60

    @Option(
        help: ArgumentHelp(
            "Seconds a request head may take to arrive once it has started; a slower one gets 408.",
            valueName: "seconds"))
    var headTimeout: Int = 20

    @Option(help: ArgumentHelp("Client connections open at once; more get 503.", valueName: "count"))
    var maxConnections: Int = 1024

    @Option(help: ArgumentHelp("Bytes of request line and header fields accepted; more get 431.", valueName: "bytes"))
    var maxHeaderSize: Int = 32 << 10

    @Option(
        help: ArgumentHelp("Bytes of request body accepted; more get 413. No limit by default.", valueName: "bytes"))
    var maxBodySize: Int?

    @Option(
        help: ArgumentHelp(
            "Bytes of request bodies held in memory at once, over all connections; a request that would take more gets 503.",
            valueName: "bytes"))
    var maxBufferedBodies: Int = 256 << 20

    @Option(
        help: ArgumentHelp(
            "Request bodies this large or larger (but of GET and HEAD) go to the origin as they arrive, never held whole.",
            valueName: "bytes"))
    var streamBodiesFrom: Int = 1 << 20

    @Option(help: ArgumentHelp("The path answering Prometheus metrics; 'none' turns it off.", valueName: "path"))
    var metricsPath: String = "/_webcache/metrics"

    @Option(
        help: ArgumentHelp(
            "What may be served while the origin is unreachable: personal (offline-first; the default in forward mode) or shared (RFC 9111 only; the default in reverse mode).",
            valueName: "posture"))
    var offlinePosture: String?

    @Option(
        help: ArgumentHelp(
            "What to do with a storable response that sets a cookie: keep (RFC 9111; the default), strip (store it without Set-Cookie: only the client that fetched it gets the cookie) or doNotStore. Overrides sharedSetCookie in --config.",
            valueName: "handling"))
    var sharedSetCookie: String?

    @Flag(
        help:
            "Forward mode: open HTTPS inside CONNECT tunnels (TLS answered with certificates from 'webcache ca') and cache it."
    )
    var interceptHttps = false

    @Option(
        help: ArgumentHelp(
            "With --intercept-https: a host (or domain, or *.domain) to intercept; repeatable. Without any, every host is (loopback --listen only).",
            valueName: "pattern"))
    var interceptHost: [String] = []

    @Flag(
        help:
            "Do not keep encoded answers for request heads seen before (answer replay: the same head, each client's User-Agent, cookies and tracing ids aside): saves its memory (up to 16 MiB, 32 MiB of files) where clients never ask for the same thing twice."
    )
    var noAnswerReplay = false

    @Option(
        help: ArgumentHelp(
            "Event-loop threads serving connections (default: one per core the process may run on, after taskset and cgroup limits).",
            valueName: "count"))
    var threads: Int?

    func validate() throws {
        _ = try parseAddress(listen, option: "--listen")
        if let upstream { _ = try parseURL(upstream) }
        guard HTTPField.Name(targetField) != nil else {
            throw ValidationError("'\(targetField)' is not a valid field name")
        }
        for (name, value) in [
            ("--upstream-timeout", upstreamTimeout), ("--idle-timeout", idleTimeout), ("--head-timeout", headTimeout),
            ("--max-connections", maxConnections),
            ("--max-header-size", maxHeaderSize), ("--max-body-size", maxBodySize ?? 1),
            ("--max-buffered-bodies", maxBufferedBodies), ("--stream-bodies-from", streamBodiesFrom),
        ] where value <= 0 {
            throw ValidationError("\(name) must be positive, not \(value)")
        }
        if let offlinePosture, HTTPCache.OfflinePosture(rawValue: offlinePosture) == nil {
            throw ValidationError("--offline-posture must be personal or shared, not '\(offlinePosture)'")
        }
        if !interceptHost.isEmpty && !interceptHttps {
            throw ValidationError("--intercept-host needs --intercept-https")
        }
        if interceptHttps && upstream != nil {
            throw ValidationError("--intercept-https is for forward mode; it cannot go with --upstream")
        }
        if interceptHttps && interceptHost.isEmpty, let (host, _) = try? parseAddress(listen, option: "--listen"),
            !NetworkExposure.isLoopback(host)
        {
            throw ValidationError(
                "--intercept-https on \(host), beyond loopback, needs --intercept-host: every client of the proxy would see every site's traffic"
            )
        }
        if let sharedSetCookie, CachePolicy.SetCookieHandling(rawValue: sharedSetCookie) == nil {
            throw ValidationError("--shared-set-cookie must be keep, strip or doNotStore, not '\(sharedSetCookie)'")
        }
        if let threads, threads <= 0 { throw ValidationError("--threads must be positive, not \(threads)") }
        guard metricsPath == "none" || metricsPath.hasPrefix("/") else {
            throw ValidationError("--metrics-path must start with '/' (or be 'none'), not '\(metricsPath)'")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let (host, port) = try parseAddress(listen, option: "--listen")
            MemoryAllocation.tuneForServing()
            let trust = try network.trust(cache)
            let interception = try interceptHttps ? makeInterception(trust: trust) : nil
            // SwiftNIO directly: interim responses (103 Early Hints) reach the clients, and new
            // upstream connections are made on the event loop of the client's connection.
            let origin = try SwiftNIOOrigin(
                connectTimeout: .seconds(min(10, upstreamTimeout)), timeout: .seconds(upstreamTimeout),
                maximumBodySize: network.maxResponseSize ?? .max, trust: trust)
            let rules = CacheRules(kind: .shared, targetedFields: [HTTPField.Name(targetField)!])
            var logger = Logger(label: "webcache-proxy")
            logger.logLevel = .info
            if let openFiles = OpenFilesLimit.raise() {
                let carried = OpenFilesLimit.connections(within: openFiles)
                if carried < maxConnections {
                    logger.warning(
                        "open files: up to \(openFiles), enough for about \(carried) connections, not the \(maxConnections) of --max-connections; raise the limit (ulimit -n) or lower --max-connections"
                    )
                } else {
                    logger.info("open files: up to \(openFiles == .max ? "unlimited" : String(openFiles))")
                }
            }
            var configuration = HTTPCache.Configuration(
                store: try cache.storeConfiguration(logger: CacheOptions.serviceLogger), rules: rules,
                policy: try proxyPolicy(), logger: CacheOptions.serviceLogger)
            let forward = upstream == nil
            configuration.offlinePosture =
                offlinePosture.flatMap(HTTPCache.OfflinePosture.init(rawValue:)) ?? (forward ? .personal : .shared)
            configuration.networkTimeout = forward ? .seconds(3) : nil
            let httpCache: HTTPCache
            do {
                httpCache = try HTTPCache(configuration: configuration, origin: origin)
            } catch {
                try? await origin.shutdown()
                throw error
            }
            let group = MultiThreadedEventLoopGroup(numberOfThreads: threads ?? ProcessorAffinity.usableCores)
            var proxyConfiguration = ProxyConfiguration(
                host: host, port: port, upstream: try upstream.map(parseURL), allowedDestinations: allowDestination,
                maximumRequestBodySize: maxBodySize ?? .max, maximumHeaderSize: maxHeaderSize,
                idleTimeout: .seconds(idleTimeout),
                maximumConnections: maxConnections, metricsPath: metricsPath == "none" ? nil : metricsPath)
            proxyConfiguration.requestHeadTimeout = .seconds(headTimeout)
            proxyConfiguration.maximumBufferedRequestBodies = maxBufferedBodies
            proxyConfiguration.streamsRequestBodiesFrom = streamBodiesFrom
            proxyConfiguration.tlsInterception = interception
            proxyConfiguration.replaysAnswers = !noAnswerReplay
            let proxy = CachingProxy(cache: httpCache, configuration: proxyConfiguration, logger: logger, group: group)
            let serving = Task { try await proxy.run() }
            let signals = onStopSignals { serving.cancel() }
            let result = await serving.result
            for signal in signals { signal.cancel() }
            await httpCache.waitForBackgroundWork(upTo: .seconds(10))
            httpCache.persistCounters()
            try? await origin.shutdown()
            try? await group.shutdownGracefully()
            if case .failure(let error) = result, !(error is CancellationError) {
                throw CommandFailure(.unavailable, "the proxy stopped: \(error)")
            }
        }
    }

    /// The configuration file's policy with this command's overrides.
    private func proxyPolicy() throws -> CachePolicy {
        var policy = try network.applied(to: cache.policy())
        if let handling = sharedSetCookie.flatMap(CachePolicy.SetCookieHandling.init(rawValue:)) {
            policy.sharedSetCookie = handling
        }
        return policy
    }

    /// Interception with this cache's certificate authority (made on first use).
    private func makeInterception(trust: OriginTrust) throws -> TLSInterception {
        do {
            let authority = try CertificateAuthority.load(orCreateIn: cache.certificateAuthorityFolder)
            return try TLSInterception(authority: authority, hosts: interceptHost, upstreamTrust: trust)
        } catch let error as CertificateAuthorityError {
            throw CommandFailure(.cacheUnusable, "cannot use the certificate authority: \(error)")
        }
    }
}
