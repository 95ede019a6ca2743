import ArgumentParser
import Foundation
import HTTPCaching
import WebCacheStore

/// `webcache ls`: the stored entries.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls", abstract: "List stored responses, most recently used first.")

    @OptionGroup var cache: CacheOptions

    @Option(help: "Only entries for this host.")
    var host: String?

    @Option(help: "At most this many entries.")
    var limit: Int = 1000

    func run() async throws {
        try await reportingFailures {
            let store = try cache.openStore()
            let rules = CacheRules.private
            let now = Date()
            let rows = try store.entries(host: host, limit: limit).map { entry -> [String] in
                let decision = rules.reuse(entry.stored, for: entry.stored.request, now: now)
                var staleness = decision.staleness
                if let expiry = entry.appExpiry { staleness = WholeSeconds.roundedDown(now.timeIntervalSince(expiry)) }
                let freshness =
                    staleness < 0 ? "fresh for \(formatSeconds(-staleness))" : "stale by \(formatSeconds(staleness))"
                return [
                    entry.key.url, String(entry.stored.response.status.code), formatBytes(entry.bodySize),
                    formatSeconds(decision.age), freshness,
                    entry.group.map { $0 + (entry.isPinned ? " (pinned)" : "") } ?? "",
                ]
            }
            guard !rows.isEmpty else {
                print(host.map { "nothing stored for \($0)" } ?? "the cache is empty")
                return
            }
            printTable(["URL", "STATUS", "SIZE", "AGE", "FRESHNESS", "GROUP"], rows)
        }
    }
}
