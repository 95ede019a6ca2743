import ArgumentParser
import Foundation
import WebCacheStore

/// `webcache rm`: remove entries by URL, host, prefix or preloaded page.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Remove stored responses for a URL, a host, a URL prefix, or a preloaded page as a unit.")

    @OptionGroup var cache: CacheOptions

    @Argument(help: "The URL whose responses to remove.")
    var url: String?

    @Option(help: "Remove everything for this host.")
    var host: String?

    @Option(help: "Remove everything whose URL starts with this prefix.")
    var prefix: String?

    @Option(
        help: ArgumentHelp(
            "Remove a preloaded page: its manifest and the resources no other page holds.", valueName: "url"))
    var page: String?

    func validate() throws {
        guard [url != nil, host != nil, prefix != nil, page != nil].filter({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of URL, --host, --prefix or --page")
        }
        if let url { _ = try parseURL(url) }
    }

    func run() async throws {
        try await reportingFailures {
            let store = try cache.openStore()
            let removed: Int
            if let url {
                removed = try store.remove(url: try parseURL(url))
            } else if let host {
                removed = try store.remove(host: host)
            } else if let page {
                guard try store.manifest(named: page) != nil else {
                    throw CommandFailure(.usage, "\(page) is not a preloaded page (see 'webcache preload')")
                }
                removed = try store.removeManifest(named: page)
            } else {
                removed = try store.remove(urlPrefix: prefix!)
            }
            print("removed \(removed) \(removed == 1 ? "entry" : "entries")")
        }
    }
}

/// `webcache purge`: remove expired entries, or everything.
struct PurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge", abstract: "Remove expired entries (--expired) or everything (--all).")

    @OptionGroup var cache: CacheOptions

    @Flag(help: "Remove entries that are useless even as stale responses.")
    var expired = false

    @Flag(help: "Remove everything, pinned pages included.")
    var all = false

    func validate() throws {
        guard expired != all else { throw ValidationError("give exactly one of --expired or --all") }
    }

    func run() async throws {
        try await reportingFailures {
            let store = try cache.openStore()
            let removed = all ? try store.removeAll() : try store.removeExpired(now: Date())
            print("removed \(removed) \(removed == 1 ? "entry" : "entries")")
        }
    }
}
