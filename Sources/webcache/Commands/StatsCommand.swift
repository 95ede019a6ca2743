import ArgumentParser
import Foundation
import HTTPCaching
import WebCache
import WebCacheStore

/// `webcache stats`: totals, per host, and what the cache has done.
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Show entries, bytes, per-host usage and hit counts.")

    @OptionGroup var cache: CacheOptions

    func run() async throws {
        try await reportingFailures {
            let store = try cache.openStore()
            let statistics = try store.statistics()
            let counters = CacheCounters(dictionary: try store.counters())
            print("cache:     \(cache.directory.path)")
            print("entries:   \(statistics.entries) (\(statistics.pinnedEntries) pinned)")
            print(
                "bytes:     \(formatBytes(statistics.diskBytes)) on disk and \(formatBytes(statistics.spareBytes)) in spare files, of \(formatBytes(store.configuration.diskCapacity)) kept at most"
            )
            print(
                "requests:  \(counters.requests) — \(counters.hits) hits, \(counters.misses) misses, \(counters.revalidations) revalidated, \(counters.staleServed) stale served, \(counters.bypassed) passed through, \(counters.blocked) blocked"
            )
            print(
                "bytes out: \(formatBytes(counters.bytesFromCache)) from cache, \(formatBytes(counters.bytesFromOrigin)) from origins"
            )
            print(
                "offline:   \(counters.unreachableSkips) answered without trying an unreachable origin, \(counters.networkTimeouts) served after the network timeout"
            )
            print(
                "problems:  \(counters.storeProblems) times the store failed under a request (full disk, corrupt body or index; see the log)"
            )
            let unreachable = try store.originStatuses()
            if !unreachable.isEmpty {
                print("")
                let now = Date()
                printTable(
                    ["UNREACHABLE ORIGIN", "SINCE", "FAILURES", "NEXT TRY", "LAST ERROR"],
                    unreachable.map { status in
                        let left = WholeSeconds.roundedUp(status.retryAfter.timeIntervalSince(now))
                        return [
                            status.origin, HTTPDate.format(status.unreachableSince), String(status.failures),
                            left > 0 ? "in \(formatSeconds(left))" : "next request", status.lastError,
                        ]
                    })
            }
            if !statistics.hosts.isEmpty {
                print("")
                printTable(
                    ["HOST", "ENTRIES", "BYTES"],
                    statistics.hosts.map { [$0.host, String($0.entries), formatBytes($0.bytes)] })
            }
        }
    }
}
