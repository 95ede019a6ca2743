import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheDemo
import WebCachePreload
import WebCacheStore
import WebCacheTestSupport

@Suite("Preloader: pages made readable offline", .serialized)
struct PreloaderTests {
    /// A cache on a fresh directory in front of a real origin on loopback.
    static func withCache(
        capacity: Int = 64 << 20, maximumEntrySize: Int = 64 << 20,
        _ body: (HTTPCache, TemporaryDirectory) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Generous: the suite starts while both cores are busy; a refused port fails at once anyway.
        let origin = AsyncHTTPClientOrigin(connectTimeout: .seconds(5), timeout: .seconds(10))
        var store = CacheStore.Configuration(directory: directory.url)
        store.diskCapacity = capacity
        store.maximumEntrySize = maximumEntrySize
        do {
            let cache = try HTTPCache(configuration: .init(store: store), origin: origin)
            try await body(cache, directory)
        } catch {
            try? await origin.shutdown()
            throw error
        }
        try await origin.shutdown()
    }

    @Test(
        "a page, its imported stylesheets, font, srcset images, script and frame are stored, pinned, and replay offline"
    )
    func offlineReplay() async throws {
        let site = try await SampleSiteServer.start()
        try await Self.withCache { cache, _ in
            let pages = SampleSite.pages.map { site.baseURL.appendingPathComponent(String($0.dropFirst())) }
            let reports = await Preloader(cache: cache).preload(pages: pages)
            #expect(reports.count == 3)
            #expect(reports.allSatisfy { $0.isComplete && $0.isPinned })
            let index = try #require(reports.first)
            let paths = Set(index.resources.map(\.url.path))
            #expect(
                paths.isSuperset(of: [
                    "/index.html", "/css/site.css", "/css/theme.css", "/css/typography.css", "/fonts/heading.ttf",
                    "/img/hero-small.svg", "/img/hero-large.svg", "/img/paper.svg", "/img/stripes.svg", "/img/logo.svg",
                    "/img/icon.svg", "/js/app.js",
                ]))
            let gallery = try #require(reports.last)
            #expect(
                Set(gallery.resources.map(\.url.path)).isSuperset(of: [
                    "/embed/map.html", "/css/embed.css", "/img/map.svg", "/img/grid.svg", "/img/tile-4@2x.svg",
                ]))
            // Each URL was fetched once, though the pages share most of them.
            let unique = Set(reports.flatMap { $0.resources.map(\.url) })
            #expect(site.requestsServed == unique.count)
            let manifests = try cache.store.manifests()
            #expect(manifests.map(\.name).sorted() == pages.map(\.absoluteString).sorted())

            try await site.stop()
            for url in unique {
                let response = try await cache.response(for: HTTPRequest(method: .get, url: url))
                #expect(response.isFromCache, "\(url) was not served from the cache")
                #expect(response.head.status == .ok)
            }
        }
    }

    @Test("pinned pages survive eviction; removing the manifest removes the page as a unit")
    func pinningAndUnitRemoval() async throws {
        let site = try await SampleSiteServer.start()
        try await withCleanup({ try? await site.stop() }) {
            try await Self.withCache(capacity: 96 << 10) { cache, _ in
                let page = site.baseURL.appendingPathComponent("index.html")
                let report = await Preloader(cache: cache).preload(pages: [page])[0]
                #expect(report.isComplete)
                let filler = Data(repeating: 7, count: 20 << 10)
                for index in 0..<12 {
                    let url = URL(string: "http://filler.test/\(index)")!
                    var head = HTTPResponse(status: .ok)
                    head.headerFields[.cacheControl] = "max-age=600"
                    _ = try cache.store.store(
                        NewEntry(
                            stored: StoredResponse(
                                request: HTTPRequest(url: url), response: head, requestTime: Date(),
                                responseTime: Date())),
                        body: filler)
                }
                for resource in report.resources {
                    let key = try #require(CacheKey(url: resource.url))
                    let found = try cache.store.lookup(key)
                    #expect(!found.isEmpty, "\(resource.url) was evicted")
                }
                let statistics = try cache.store.statistics()
                #expect(statistics.diskBytes <= 96 << 10 + report.bytes, "unpinned entries were not evicted")

                let removed = try cache.store.removeManifest(named: page.absoluteString)
                #expect(removed == report.resources.count)
                let left = try cache.store.manifests()
                #expect(left.isEmpty)
                let key = try #require(CacheKey(url: page))
                let gone = try cache.store.lookup(key)
                #expect(gone.isEmpty)
            }
        }
    }

    @Test("a refresh that cannot reach the origin keeps a page as it was and never shrinks its manifest")
    func offlineRefreshKeepsManifest() async throws {
        let site = try await SampleSiteServer.start(cacheControl: "no-cache")
        try await Self.withCache { online, directory in
            let page = site.baseURL.appendingPathComponent("index.html")
            let first = await Preloader(cache: online).preload(pages: [page])
            let held = try #require(try online.store.manifest(named: page.absoluteString)).resources
            #expect(first[0].isComplete && held.count > 5)
            try await site.stop()
            // Another session on the same directory: no connection to the origin left open.
            let network = AsyncHTTPClientOrigin(connectTimeout: .seconds(10), timeout: .seconds(5))
            try await withCleanup({ try? await network.shutdown() }) {
                let cache = try HTTPCache(
                    configuration: .init(store: CacheStore.Configuration(directory: directory.url)), origin: network)
                var refresh = PreloadOptions()
                refresh.mode = .revalidate
                let kept = await Preloader(cache: cache, options: refresh).preload(pages: [page])
                #expect(kept[0].isComplete)
                #expect(kept[0].keptOffline.count == kept[0].resources.count)
                #expect(try cache.store.manifest(named: page.absoluteString)?.resources == held)
                // Too stale to serve even offline: the page fails, and its manifest still holds all.
                cache.updatePolicy { $0.offlineMaxStale = -1 }
                let failed = await Preloader(cache: cache, options: refresh).preload(pages: [page])
                #expect(!failed[0].isComplete)
                #expect(Set(try #require(try cache.store.manifest(named: page.absoluteString)).resources) == Set(held))
            }
        }
    }

    @Test("a missing resource makes the page incomplete, with the reason")
    func missingResource() async throws {
        try await TestOrigin.with { origin in
            origin.route("/page.html") { _ in
                TestOrigin.Response(
                    headers: [("Content-Type", "text/html"), ("Cache-Control", "max-age=600")],
                    body: Data("<link rel=stylesheet href=/ok.css><img src=/missing.png>".utf8))
            }
            origin.route("/ok.css") { _ in
                .text(
                    "a { background: url(gone.svg) }",
                    headers: [("Content-Type", "text/css"), ("Cache-Control", "max-age=600")])
            }
            try await Self.withCache { cache, _ in
                let report = await Preloader(cache: cache).preload(pages: [origin.url("/page.html")])[0]
                #expect(!report.isComplete)
                #expect(Set(report.failures.map(\.url.path)) == ["/missing.png", "/gone.svg"])
                #expect(report.failures.allSatisfy { $0.failure == "HTTP 404" })
                let manifest = try cache.store.manifest(named: origin.url("/page.html").absoluteString)
                #expect(manifest?.isComplete == false)
            }
        }
    }

    @Test("a resource the store does not keep (too large, no-store) makes the page incomplete, with the reason")
    func resourceNotKept() async throws {
        try await TestOrigin.with { origin in
            origin.route("/page.html") { _ in
                TestOrigin.Response(
                    headers: [("Content-Type", "text/html"), ("Cache-Control", "max-age=600")],
                    body: Data("<video src=/big.webm></video><img src=/private.png><img src=/ok.png>".utf8))
            }
            origin.route("/big.webm") { _ in
                TestOrigin.Response(
                    headers: [("Content-Type", "video/webm"), ("Cache-Control", "max-age=600")],
                    body: Data(count: 300_000))
            }
            origin.route("/private.png") { _ in
                TestOrigin.Response(headers: [("Cache-Control", "no-store")], body: Data(count: 100))
            }
            origin.route("/ok.png") { _ in
                TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: Data(count: 100))
            }
            try await Self.withCache(maximumEntrySize: 200_000) { cache, _ in
                let report = await Preloader(cache: cache).preload(pages: [origin.url("/page.html")])[0]
                #expect(!report.isComplete)
                let reasons = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.url.path, $0.failure ?? "") })
                #expect(Set(reasons.keys) == ["/big.webm", "/private.png"])
                #expect(reasons["/big.webm"]?.contains("maximumEntrySize") == true, "\(reasons)")
                #expect(reasons["/private.png"]?.contains("may not be kept") == true, "\(reasons)")
            }
        }
    }

    @Test("depth follows same-site links; events report progress and end with the reports")
    func crawlingAndEvents() async throws {
        let site = try await SampleSiteServer.start()
        try await withCleanup({ try? await site.stop() }) {
            try await Self.withCache { cache, _ in
                var options = PreloadOptions()
                options.depth = 1
                options.pin = false
                var started = 0
                var finished = 0
                var completed: [PageReport] = []
                for await event in Preloader(cache: cache, options: options).events(preloading: [
                    site.baseURL.appendingPathComponent("index.html")
                ]) {
                    switch event {
                    case .started: started += 1
                    case .finished: finished += 1
                    case .completed(let reports): completed = reports
                    case .failed, .pageFinished: break
                    }
                }
                #expect(completed.map(\.page.path) == ["/index.html", "/guide.html", "/gallery.html"])
                #expect(started == finished && started == Set(completed.flatMap { $0.resources.map(\.url) }).count)
                let manifests = try cache.store.manifests()
                #expect(manifests.isEmpty, "without pinning no manifest is recorded")
            }
        }
    }

    @Test("the byte budget stops the run cleanly: what did not fit is reported")
    func byteBudget() async throws {
        let site = try await SampleSiteServer.start()
        try await withCleanup({ try? await site.stop() }) {
            try await Self.withCache { cache, _ in
                var options = PreloadOptions()
                options.maximumBytes = 1
                options.concurrency = 1
                let report = await Preloader(cache: cache, options: options).preload(pages: [
                    site.baseURL.appendingPathComponent("index.html")
                ])[0]
                #expect(!report.isComplete)
                #expect(report.failures.allSatisfy { $0.failure?.contains("byte limit") == true })
            }
        }
    }
}
