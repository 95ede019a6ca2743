import NIOConcurrencyHelpers
import Prometheus
import WebCache

/// The proxy's counters in Prometheus text format: the engine's own counters (requests, hits,
/// misses, revalidations, stale responses, bytes from cache and origin) and the proxy's
/// (connections, tunnels, responses by status class, refusals).
final class ProxyMetrics: Sendable {
    private let registry: PrometheusCollectorRegistry
    private let engineCounters: [(@Sendable (CacheCounters) -> Int, Counter)]
    private let engineSeen = NIOLockedValueBox(CacheCounters())
    let connectionsOpen: Gauge
    let connectionsAccepted: Counter
    let connectionsRefused: Counter
    let tunnels: Counter
    let interceptedTunnels: Counter
    let interceptionRefusals: Counter
    private let unreachableOrigins: Gauge
    private let entriesWaitingForIndex: Gauge
    private let memoryTierBytes: Gauge
    private let indexLookups: Counter
    private let indexLookupsSeen = NIOLockedValueBox(0)
    private let responsesByClass: [Counter]

    init() {
        let registry = PrometheusCollectorRegistry()
        func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "webcache", metricName: metric, unitName: unit, helpText: help)
        }
        let engine: [(@Sendable (CacheCounters) -> Int, MetricNameDescriptor)] = [
            ({ $0.requests }, name("requests", "total", "Requests the cache handled")),
            ({ $0.hits }, name("hits", "total", "Requests answered from the cache without the origin")),
            ({ $0.misses }, name("misses", "total", "Requests sent to the origin because nothing usable was stored")),
            ({ $0.revalidations }, name("revalidations", "total", "Stored responses validated with the origin")),
            ({ $0.staleServed }, name("stale_served", "total", "Stale responses served")),
            ({ $0.bypassed }, name("bypassed", "total", "Requests passed through uncached")),
            ({ $0.blocked }, name("blocked", "total", "Requests answered by the block-list")),
            (
                { $0.unreachableSkips },
                name("unreachable_skips", "total", "Requests that did not try an origin known to be unreachable")
            ),
            (
                { $0.networkTimeouts },
                name("network_timeouts", "total", "Stored responses served because the origin did not answer in time")
            ),
            (
                { $0.storeProblems },
                name(
                    "store_problems", "total",
                    "Times the store failed under a request (full disk, corrupt body or index)")
            ),
            ({ $0.bytesFromCache }, name("bytes_from_cache", "total", "Body bytes served from the cache")),
            ({ $0.bytesFromOrigin }, name("bytes_from_origin", "total", "Body bytes received from the origin")),
        ]
        engineCounters = engine.map { value, descriptor in (value, registry.makeCounter(descriptor: descriptor)) }
        connectionsOpen = registry.makeGauge(
            descriptor: name("proxy_connections_open", "", "Client connections open now"))
        connectionsAccepted = registry.makeCounter(
            descriptor: name("proxy_connections", "total", "Client connections accepted"))
        connectionsRefused = registry.makeCounter(
            descriptor: name("proxy_connections_refused", "total", "Client connections refused at the connection limit")
        )
        tunnels = registry.makeCounter(descriptor: name("proxy_tunnels", "total", "CONNECT tunnels opened"))
        interceptedTunnels = registry.makeCounter(
            descriptor: name(
                "proxy_intercepted_tunnels", "total", "CONNECT tunnels whose TLS the proxy answered, to cache HTTPS"))
        interceptionRefusals = registry.makeCounter(
            descriptor: name(
                "proxy_interception_refusals", "total",
                "CONNECT tunnels refused because the host's own certificate failed verification"))
        unreachableOrigins = registry.makeGauge(
            descriptor: name("unreachable_origins", "", "Origins that could not be reached and are skipped for now"))
        entriesWaitingForIndex = registry.makeGauge(
            descriptor: name(
                "index_entries_waiting", "",
                "Responses stored and waiting for the index writer (past the store's bound, new ones are not stored)"))
        memoryTierBytes = registry.makeGauge(
            descriptor: name("memory", "bytes", "Bytes of entries the memory tier holds, of its capacity"))
        indexLookups = registry.makeCounter(
            descriptor: name(
                "index_lookups", "total",
                "Lookups the memory tier could not answer, read from the index (many beside hits: a tier too small)"))
        let responses = name("proxy_responses", "total", "Responses sent, by status class")
        responsesByClass = (1...5).map { digit in
            registry.makeCounter(descriptor: responses, labels: [("code", "\(digit)xx")])
        }
        self.registry = registry
    }

    /// Counts a response sent to a client.
    func countResponse(status code: Int) {
        let index = code / 100 - 1
        if responsesByClass.indices.contains(index) { responsesByClass[index].increment() }
    }

    /// Counts on `counter` what a total the metrics read (never falling) gained since `seen`.
    private static func advance(_ counter: Counter, from seen: Int, to total: Int) {
        if total > seen { counter.increment(by: Int64(total - seen)) }
    }

    /// The store's figures the metrics read besides the engine's counters.
    struct StoreFigures {
        /// Entries waiting for the index writer.
        var entriesWaitingForIndex: Int
        /// Bytes the memory tier holds.
        var memoryTierBytes: Int
        /// Lookups read from the index since the store was opened.
        var indexLookups: Int
    }

    /// The text exposition, with the engine's counters (and its count of origins known to be
    /// unreachable, and the store's figures) brought up to date.
    func exposition(engine current: CacheCounters, unreachableOrigins unreachable: Int, store: StoreFigures)
        -> [UInt8]
    {
        unreachableOrigins.set(Int64(unreachable))
        entriesWaitingForIndex.set(Int64(store.entriesWaitingForIndex))
        memoryTierBytes.set(Int64(store.memoryTierBytes))
        indexLookupsSeen.withLockedValue { seen in
            Self.advance(indexLookups, from: seen, to: store.indexLookups)
            seen = max(seen, store.indexLookups)
        }
        engineSeen.withLockedValue { seen in
            for (value, counter) in engineCounters { Self.advance(counter, from: value(seen), to: value(current)) }
            seen = current
        }
        return registry.emitToBuffer()
    }
}
