import ArgumentParser
import Dispatch
import Foundation
import NIOSSL
import WebCache
import WebCacheDemo
import WebCachePreload
import WebCacheTLS

/// `webcache demo`: the whole story in one command, with no internet.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Preload a bundled sample site, take its server away, and read it from the cache.",
        discussion: """
            Serves the sample site from an in-process origin on 127.0.0.1, preloads its pages, \
            stops the origin, then loads every page again through the cache and shows where each \
            resource came from. Nothing leaves the machine. With --serve, only serves the site \
            (for trying the proxy with a browser).
            """)

    @Option(
        help: ArgumentHelp(
            "The cache directory (default: a new temporary directory, kept for browsing afterwards).", valueName: "dir")
    )
    var cacheDir: String?

    @Option(
        help: ArgumentHelp("Milliseconds the origin waits before each response, to feel the network.", valueName: "ms"))
    var latency: Int = 40

    @Option(help: ArgumentHelp("Only serve the sample site at HOST:PORT until interrupted.", valueName: "address"))
    var serve: String?

    @Option(
        help: ArgumentHelp(
            "The Cache-Control the sample site sends (e.g. 'no-cache', as most sites do for HTML).", valueName: "value")
    )
    var cacheControl: String = "public, max-age=3600"

    @Option(
        help: ArgumentHelp(
            "With --serve: speak HTTPS, with a certificate from a test authority kept in this folder (made if missing); clients trust its ca.pem.",
            valueName: "dir"))
    var tlsAuthority: String?

    func validate() throws {
        if tlsAuthority != nil && serve == nil { throw ValidationError("--tls-authority goes with --serve") }
        guard (0...10_000).contains(latency) else { throw ValidationError("--latency must be between 0 and 10000 ms") }
        if let serve { _ = try parseAddress(serve, option: "--serve") }
        guard !cacheControl.isEmpty, !cacheControl.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw ValidationError("--cache-control must be one line of text")
        }
    }

    func run() async throws {
        try await reportingFailures {
            if let serve {
                try await serveOnly(serve)
            } else {
                try await tour()
            }
        }
    }

    private func serveOnly(_ address: String) async throws {
        let (host, port) = try parseAddress(address, option: "--serve")
        var tls: NIOSSLContext?
        if let tlsAuthority {
            do {
                let authority = try CertificateAuthority.load(orCreateIn: URL(fileURLWithPath: tlsAuthority))
                tls = try authority.makeServerContext(for: [host])
                print(
                    "HTTPS with a certificate from the test authority \(authority.certificateFile?.path ?? tlsAuthority)"
                )
            } catch {
                throw CommandFailure(.usage, "cannot set up HTTPS with the authority in \(tlsAuthority): \(error)")
            }
        }
        let server = try await SampleSiteServer.start(
            host: host, port: port, latency: .milliseconds(latency), cacheControl: cacheControl, tls: tls)
        print(
            "serving the sample site at \(tls == nil ? "http" : "https")://\(host):\(server.port)/ (\(SampleSite.pages.joined(separator: ", "))); Ctrl-C stops"
        )
        let signals = onStopSignals { Task { try? await server.stop() } }
        try await server.waitUntilClosed()
        for signal in signals { signal.cancel() }
    }

    private func tour() async throws {
        let directory =
            cacheDir.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "webcache-demo-\(UUID().uuidString.prefix(8))")
        let options = try CacheOptions.parse(["--cache-dir", directory.path])
        let site = try await SampleSiteServer.start(latency: .milliseconds(latency), cacheControl: cacheControl)
        let pages = SampleSite.pages.map { site.baseURL.appendingPathComponent(String($0.dropFirst())) }
        print(
            """
            WebCache demo — offline reading, no internet needed

            1. A website is up at \(site.baseURL.absoluteString)/ (\(latency) ms per response).
               Preloading its \(pages.count) pages and everything they need into \(directory.path)
            """)
        fflush(nil)  // keep the story in order with the progress on stderr
        let clock = ContinuousClock()
        let onlineStart = clock.now
        let preloaded = try await CachedSession.run(options) { cache in
            try await PreloadCommand.preload(pages, options: PreloadOptions(), cache: cache)
        }
        let onlineTime = clock.now - onlineStart
        PreloadSummary.print(preloaded)
        print("   done in \(Self.milliseconds(onlineTime)) ms, \(site.requestsServed) requests to the origin.\n")

        try await site.stop()
        print("2. The website is gone: its server is stopped.\n")

        print("3. Opening every page again, through the cache:")
        fflush(nil)
        var offline = PreloadOptions()
        offline.pin = false
        let offlineStart = clock.now
        let reread = try await CachedSession.run(options) { cache in
            await Preloader(cache: cache, options: offline).preload(pages: pages)
        }
        let offlineTime = clock.now - offlineStart
        var rows: [[String]] = []
        for report in reread {
            for (index, resource) in report.resources.enumerated() {
                rows.append([
                    index == 0 ? report.page.path : "  " + resource.url.path,
                    resource.failure == nil ? (resource.fromCache ? "cache" : "origin") : "FAILED",
                    formatBytes(resource.bytes),
                    String(format: "%.1f ms", Double(Self.microseconds(resource.duration)) / 1000),
                ])
            }
        }
        printTable(["RESOURCE", "FROM", "BYTES", "TIME"], rows)
        let all = reread.flatMap(\.resources)
        let fromCache = all.filter { $0.fromCache && $0.succeeded }.count
        print(
            """

               \(fromCache) of \(all.count) resources came from the cache, in \(Self.milliseconds(offlineTime)) ms \
            (online it took \(Self.milliseconds(onlineTime)) ms).

            4. Read it in a real browser, still offline, through the caching proxy:
                 webcache proxy --cache-dir \(directory.path) --listen 127.0.0.1:8080 --allow-destination 127.0.0.1
                 chromium --proxy-server=http://127.0.0.1:8080 --proxy-bypass-list='<-loopback>' \(pages[0].absoluteString)
               Remove the demo's cache afterwards: rm -r \(directory.path)
            """)
        if fromCache != all.count {
            throw CommandFailure(.unavailable, "\(all.count - fromCache) resource(s) were not served from the cache")
        }
    }

    static func milliseconds(_ duration: Duration) -> Int { Int(microseconds(duration) / 1000) }

    static func microseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}
