import ArgumentParser
import Foundation
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheNIO
import WebCachePreload

/// `webcache preload`: make pages readable offline.
struct PreloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preload",
        abstract: "Store pages and everything they need, pinned, for offline reading.",
        discussion: """
            Fetches each page, finds its stylesheets (and what they import), scripts, images \
            (srcset included), fonts, media and frames, fetches those through the cache and \
            records a manifest that pins them until 'webcache rm --page URL'. Exit status 0 when \
            every page is complete, 69 when a resource could not be stored.
            """)

    @OptionGroup var cache: CacheOptions
    @OptionGroup var network: NetworkOptions

    @Argument(help: "The pages to preload.")
    var urls: [String]

    @Option(help: ArgumentHelp("Levels of same-site links to follow from each page.", valueName: "n"))
    var depth: Int = 0

    @Option(help: ArgumentHelp("Requests in flight at once (per host: the same, at most 16).", valueName: "n"))
    var concurrency: Int = 32

    @Option(
        help: ArgumentHelp(
            "Another host resources may come from (repeatable); the page's own site always may.", valueName: "host"))
    var allowHost: [String] = []

    @Option(help: ArgumentHelp("The most pages in one run.", valueName: "n"))
    var maxPages: Int = 100

    @Flag(help: "Do not record manifests: the resources stay subject to eviction.")
    var noPin = false

    @Flag(help: "Revalidate everything already stored (refresh the pages as a unit).")
    var refresh = false

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one page URL") }
        for url in urls { _ = try parseURL(url) }
        guard depth >= 0, concurrency > 0, maxPages > 0 else {
            throw ValidationError("--depth must be ≥ 0, --concurrency and --max-pages > 0")
        }
    }

    func run() async throws {
        try await reportingFailures {
            var options = PreloadOptions()
            options.depth = depth
            options.concurrency = concurrency
            options.concurrencyPerHost = min(concurrency, 16)
            options.maximumPages = maxPages
            options.pin = !noPin
            options.mode = refresh ? .revalidate : .default
            if !allowHost.isEmpty { options.scope = .sameSiteAnd(allowHost) }
            let pages = try urls.map(parseURL)
            let reports = try await CachedSession.run(
                cache, network: network, connectionsPerHost: options.concurrencyPerHost
            ) { httpCache in
                try await Self.preload(pages, options: options, cache: httpCache)
            }
            PreloadSummary.print(reports)
            if reports.contains(where: { !$0.isComplete }) {
                throw CommandFailure(
                    .unavailable,
                    "\(reports.filter { !$0.isComplete }.count) of \(reports.count) page(s) incomplete: see the failures above"
                )
            }
        }
    }

    /// Runs the preloader, showing progress: a bar on a terminal, lines otherwise.
    static func preload(_ pages: [URL], options: PreloadOptions, cache: HTTPCache) async throws -> [PageReport] {
        let progress = ProgressDisplay(interactive: isatty(STDERR_FILENO) == 1)
        var reports: [PageReport] = []
        for await event in Preloader(cache: cache, options: options).events(preloading: pages) {
            progress.show(event)
            if case .completed(let all) = event { reports = all }
        }
        progress.end()
        return reports
    }
}

/// Opens the cache the command options describe around an AsyncHTTPClient origin, runs `body`,
/// and closes everything whatever happens.
enum CachedSession {
    /// The largest response body taken from the origin unless `--max-response-size` says
    /// otherwise: the preloader holds pages and stylesheets whole to find their references.
    static let pageBodyLimit = 512 << 20

    static func run<T>(
        _ options: CacheOptions, network: NetworkOptions? = nil, connectionsPerHost: Int = 8,
        _ body: (HTTPCache) async throws -> T
    ) async throws -> T {
        let policy = try network?.applied(to: options.policy()) ?? options.policy()
        let storeConfiguration = try options.storeConfiguration()
        let trust = try network?.trust(options) ?? OriginTrust(certificateFiles: options.configuredCACertificates())
        let origin = AsyncHTTPClientOrigin(
            maximumBodySize: network?.maxResponseSize ?? Self.pageBodyLimit,
            maximumConnectionsPerHost: connectionsPerHost, trust: trust)
        do {
            let httpCache: HTTPCache
            do {
                httpCache = try HTTPCache(
                    configuration: .init(store: storeConfiguration, policy: policy, logger: CacheOptions.quietLogger),
                    origin: origin)
            } catch {
                throw CommandFailure(.cacheUnusable, "cannot open the cache at \(options.directory.path): \(error)")
            }
            let result = try await body(httpCache)
            await httpCache.waitForBackgroundWork(
                upTo: httpCache.configuration.networkTimeout(under: policy) ?? .seconds(5))
            httpCache.persistCounters()
            try? await origin.shutdown()
            return result
        } catch {
            try? await origin.shutdown()
            throw error
        }
    }
}
