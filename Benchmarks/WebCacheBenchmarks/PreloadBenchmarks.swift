import Foundation
import WebCache
import WebCacheAsyncHTTPClient
import WebCachePreload
import WebCacheStore
import WebCacheTestSupport

/// Issue 6's preload benchmark: a page with 40 subresources behind two levels of CSS, from an
/// origin that waits 50 ms before every response, against the critical path of four round
/// trips (page → stylesheet → the stylesheet it imports → that one's fonts and images).
struct PreloadBenchmarks {
    var log: (String) -> Void
    static let latency = 50

    func run() async throws -> [Measurement] {
        log("preload: 40 subresources, \(Self.latency) ms per response")
        let origin = TestOrigin()
        try await origin.start()
        let delay = Duration.milliseconds(Self.latency)
        let cacheable = [("Cache-Control", "max-age=3600")]
        @Sendable func file(_ type: String, _ body: Data) -> TestOrigin.Response {
            TestOrigin.Response(status: 200, headers: cacheable + [("Content-Type", type)], body: body, delay: delay)
        }
        // page: a.css, 2 scripts, 19 images (22); a.css: b.css and 5 images (6); b.css: 4 fonts, 8 images (12).
        let pageImages = (1...19).map { "<img src=/p\($0).png>" }.joined()
        origin.route("/page.html") { _ in
            file(
                "text/html",
                Data(
                    "<link rel=stylesheet href=/a.css><script src=/s1.js></script><script src=/s2.js></script>\(pageImages)"
                        .utf8))
        }
        origin.route("/a.css") { _ in
            file(
                "text/css",
                Data(("@import url(b.css);" + (1...5).map { ".a\($0){background:url(a\($0).png)}" }.joined()).utf8))
        }
        origin.route("/b.css") { _ in
            file(
                "text/css",
                Data(
                    ((1...4).map { "@font-face{font-family:f\($0);src:url(f\($0).woff2)}" }
                        + (1...8).map { ".b\($0){background:url(b\($0).png)}" }).joined().utf8))
        }
        let asset = BenchFixtures.body(8 << 10)
        for path in (1...19).map({ "/p\($0).png" }) + (1...5).map({ "/a\($0).png" }) + (1...8).map({ "/b\($0).png" })
            + (1...4).map({ "/f\($0).woff2" }) + ["/s1.js", "/s2.js"]
        {
            origin.route(path) { _ in file("application/octet-stream", asset) }
        }
        var samples: [Double] = []
        for _ in 0..<7 {
            let directory = BenchFixtures.temporaryDirectory("preload")
            defer { try? FileManager.default.removeItem(at: directory) }
            let network = AsyncHTTPClientOrigin(maximumConnectionsPerHost: PreloadOptions().concurrencyPerHost)
            let cache = try HTTPCache(
                configuration: .init(store: CacheStore.Configuration(directory: directory)), origin: network)
            let start = DispatchTime.now().uptimeNanoseconds
            let report = await Preloader(cache: cache).preload(pages: [origin.url("/page.html")])[0]
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start))
            try await network.shutdown()
            precondition(report.isComplete && report.resources.count == 41, "preload incomplete: \(report.failures)")
        }
        try await origin.stop()
        samples.sort()
        let median = samples[samples.count / 2]
        let criticalPath = Double(4 * Self.latency) * 1_000_000
        return [
            Measurement(
                group: "preload 40 subresources, 50 ms latency", name: "page to complete manifest", webCache: median,
                note: String(
                    format: "%.2f× the 4-round-trip critical path (200 ms); includes new connections",
                    median / criticalPath)),
            scanningLargePage(),
        ]
    }

    /// Finding the references of a large page (a long article or a single-page manual: 20,000
    /// paragraphs of plain markup, 2,000 images, every 500th paragraph nested 200 deep).
    func scanningLargePage() -> Measurement {
        var html = "<html><head><link rel=stylesheet href=/site.css></head><body><article>"
        for index in 0..<20_000 {
            html +=
                "<p class=para id=p\(index)>Some <b>text</b> with <a href=/w/\(index % 700)>a link</a> and <span>more</span>.</p>"
            if index % 10 == 0 {
                html += "<figure><img src=/i/\(index).png alt=picture><figcaption>a picture</figcaption></figure>"
            }
            if index % 500 == 0 {
                html +=
                    String(repeating: "<div>", count: 200) + "<img src=/deep/\(index).png>"
                    + String(repeating: "</div>", count: 200)
            }
        }
        html += "</article><script src=/app.js></script></body></html>"
        let page = Data(html.utf8)
        let url = URL(string: "http://example.test/manual.html")!
        var found = 0
        let time = medianTime(samples: 7, iterations: 1, warmup: 1) {
            found = HTMLReferences.scan(page, url: url).resources.count
        }
        precondition(found == 2_000 + 40 + 2, "the large page's references: \(found)")
        return Measurement(
            group: "preload: scanning a page",
            name: String(format: "%.1f MB of markup, %d references", Double(page.count) / 1_048_576, found),
            webCache: time,
            note: "libxml2's HTML parser read as events, no tree built; only elements that can hold a reference kept"
        )
    }
}
