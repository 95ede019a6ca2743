import HTTPCaching
import HTTPTypes
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import WebCache
import WebCacheNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP/1.1 caching proxy over an `HTTPCache` (use shared-cache rules), in reverse
/// mode (one upstream) or forward mode (absolute-form requests, `CONNECT` tunnels).
///
/// ```swift
/// let proxy = CachingProxy(cache: cache, configuration: .init(port: 8080, upstream: URL(string: "http://127.0.0.1:8000")))
/// try await proxy.run()        // until the task is cancelled
/// ```
public final class CachingProxy: Sendable {
    let cache: HTTPCache
    let configuration: ProxyConfiguration
    let logger: Logger
    let metrics = ProxyMetrics()
    private let connections: OpenConnections
    private let boundPort = NIOLockedValueBox<Int?>(nil)
    /// Reverse mode: recent request targets, byte for byte (see `reverseTarget(_:)`).
    let reverseTargets = NIOLockedValueBox(KeptTargets())
    static let reverseTargetsKept = 1 << 14

    /// Parsed request targets kept for the next request with the same bytes: only those seen
    /// before (a miss or a first hit names a target once, and keeping it would only push out
    /// one that repeats).
    struct KeptTargets {
        var targets = BoundedTable<ByteExactText, ReverseTarget>(capacity: CachingProxy.reverseTargetsKept)
        var seen = SeenOnce(slots: CachingProxy.reverseTargetsKept * 2)
    }
    /// The request bodies held in memory, over all connections.
    let requestBodies: RequestBodyBudget
    /// Fresh answers from the store as sent, for the same requests again.
    let answers: ReplayCache
    /// The same inside intercepted tunnels: their requests name no scheme, so they are kept
    /// apart from plain ones.
    let tunnelAnswers: ReplayCache
    /// Whole answers waiting for the end of their loop's tick to be flushed, per loop.
    let endOfTickFlushes = EndOfTickFlushTable()
    /// Encodings of fresh answers per entry, for requests that differ but get the same answer.
    let encodedAnswers: EncodedAnswers
    /// HTTPS interception, when configured and usable (see ``interceptionProblem``).
    let interception: Interception?
    /// Destination names checked by resolving them (an exposed forward proxy).
    let destinations = DestinationResolution()
    /// Why interception is configured but cannot run; ``run()`` fails with it.
    private let interceptionProblem: String?
    /// Where replayed answers' ``WireFile``s are made: the store's directory.
    let wireFileDirectory: String
    /// Reverse mode: the upstream's `host[:port]`.
    let upstreamAuthority: String?
    /// Reverse mode: the upstream's scheme.
    let upstreamScheme: String?
    /// Reverse mode: the upstream URL without a trailing `/`, which request paths follow.
    let upstreamPrefix: String?
    /// This proxy's `Via` entry for HTTP/1.1 and for HTTP/1.0 requests.
    let viaEntries: (http11: String, http10: String)

    /// The event loops connections are served on.
    let group: any EventLoopGroup

    /// Creates a proxy; nothing listens until ``run()``.
    ///
    /// Connections are served on `group`'s event loops, SwiftNIO's shared group by default. A
    /// server pinned to fewer cores than the machine has should pass a group with one loop per
    /// core it may use (``ProcessorAffinity/usableCores``): two loops time-sliced on one core
    /// leave one loop's connections waiting a whole scheduler slice at a time.
    public init(
        cache: HTTPCache, configuration: ProxyConfiguration, logger: Logger = Logger(label: "WebCacheProxy"),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        // A connection's engine work stays on its event loop.
        EventLoopCallerTasks.install()
        self.group = group
        self.cache = cache
        self.answers = ReplayCache(clock: cache.clock)
        self.tunnelAnswers = ReplayCache(clock: cache.clock)
        self.encodedAnswers = EncodedAnswers(clock: cache.clock)
        self.wireFileDirectory = cache.directory.path
        self.configuration = configuration
        self.logger = logger
        self.connections = OpenConnections(limit: configuration.maximumConnections)
        self.requestBodies = RequestBodyBudget(limit: configuration.maximumBufferedRequestBodies)
        (self.interception, self.interceptionProblem) = Interception.make(for: configuration)
        self.upstreamAuthority = configuration.upstream.flatMap { upstream in
            upstream.host.map { HTTPURLs.authority(host: $0, port: upstream.port) }
        }
        self.upstreamScheme = configuration.upstream?.scheme
        self.upstreamPrefix = configuration.upstream.map {
            let text = $0.absoluteString
            return text.hasSuffix("/") ? String(text.dropLast()) : text
        }
        self.viaEntries = ("1.1 \(configuration.viaName)", "1.0 \(configuration.viaName)")
    }

    /// The port the proxy listens on, once ``run()`` has bound it.
    public var port: Int? { boundPort.withLockedValue { $0 } }

    /// The metrics in Prometheus text format, as the metrics path answers them.
    public func metricsText() -> String {
        String(decoding: metricsExposition(), as: UTF8.self)
    }

    /// The metrics' bytes, with the engine's figures of this moment.
    func metricsExposition() -> [UInt8] {
        metrics.exposition(
            engine: cache.counters, unreachableOrigins: cache.unreachableOrigins.count,
            store: ProxyMetrics.StoreFigures(
                entriesWaitingForIndex: cache.entriesWaitingForIndex, memoryTierBytes: cache.memoryTierBytes,
                indexLookups: cache.indexLookups))
    }

    /// Listens and serves until the calling task is cancelled. Then it stops accepting, lets the
    /// requests in flight finish (up to ``ProxyConfiguration/drainTimeout``), closes the rest and
    /// returns.
    public func run() async throws {
        if let interceptionProblem { throw ProxyConfigurationError(.unsafeInterception, interceptionProblem) }
        let server = try await ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 512)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // A client that half-closes after its request still gets the answer (RFC 9112 §9.6).
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .tunedForServing()
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try self.serve(channel) }
            }
            .bind(host: configuration.host, port: configuration.port)
            .get()
        boundPort.withLockedValue { $0 = server.localAddress?.port }
        logger.info(
            "listening on \(configuration.host):\(port ?? 0)\(configuration.upstream.map { " for \($0.absoluteString)" } ?? " (forward mode\(interception == nil ? "" : ", intercepting HTTPS"))")"
        )

        let (stopped, stop) = AsyncStream<Void>.makeStream()
        server.closeFuture.whenComplete { _ in stop.finish() }
        await withTaskCancellationHandler {
            for await _ in stopped {}
        } onCancel: {
            stop.finish()
        }
        try? await server.close()
        logger.info("stopping: \(connections.count) connection(s) to finish")
        await connections.drain(timeout: configuration.drainTimeout, on: group.any())
    }

    /// Serves HTTP/1.1 on `channel`, a connection accepted by the caller rather than by
    /// ``run()``: from a server bootstrap of the app's own, or a `NIOAsyncTestingChannel` that a
    /// test or fuzzer writes request bytes into. Call it on the channel's event loop before the
    /// channel reads. The connection counts against
    /// ``ProxyConfiguration/maximumConnections`` like those ``run()`` accepts: over the limit it
    /// gets a 503 and is closed.
    public func serve(_ channel: any Channel) throws {
        guard connections.admit(channel) else {
            metrics.connectionsRefused.increment()
            let refusal =
                "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
            channel.writeAndFlush(ByteBuffer(string: refusal)).whenComplete { _ in channel.close(promise: nil) }
            return
        }
        metrics.connectionsAccepted.increment()
        metrics.connectionsOpen.increment(by: 1)
        channel.closeFuture.whenComplete { _ in self.metrics.connectionsOpen.decrement(by: 1) }
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(IdleConnectionHandler(timeout: .nanoseconds(configuration.idleTimeout.nanoseconds)))
        try pipeline.addHandler(ProxyHTTPHandler(proxy: self))
    }
}
