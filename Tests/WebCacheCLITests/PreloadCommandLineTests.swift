import Foundation
import Testing
import WebCacheDemo
import WebCacheTestSupport

@Suite("webcache preload and webcache demo, run as processes", .serialized)
struct PreloadCommandLineTests {
    @Test("preload stores and pins pages, rm --page removes one as a unit, and a missing resource exits 69")
    func preload() async throws {
        let site = try await SampleSiteServer.start()
        try await withCleanup({ try? await site.stop() }) {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let dir = ["--cache-dir", directory.url.path]
            let index = site.baseURL.appendingPathComponent("index.html").absoluteString

            let run = try await WebCacheProcess.run(["preload", index, "--depth", "1"] + dir)
            #expect(run.status == 0, "\(run.error)")
            #expect(run.output.contains("PAGE") && run.output.contains("complete, pinned"))
            #expect(run.output.split(separator: "\n").filter { $0.contains("complete, pinned") }.count == 3)
            #expect(run.error.contains("ok    origin"), "plain progress lines when not on a terminal")

            let stats = try await WebCacheProcess.run(["stats"] + dir)
            #expect(stats.status == 0)
            let removed = try await WebCacheProcess.run(
                ["rm", "--page", site.baseURL.appendingPathComponent("guide.html").absoluteString] + dir)
            #expect(removed.status == 0)
            #expect(
                removed.output.contains("removed 5 entries"),
                "the page, guide.css, the pattern and two diagrams are the guide's own: \(removed.output)")
            let unknown = try await WebCacheProcess.run(["rm", "--page", "http://127.0.0.1:1/nothing"] + dir)
            #expect(unknown.status == 64)

            try await TestOrigin.with { origin in
                origin.route("/broken.html") { _ in
                    TestOrigin.Response(
                        headers: [("Content-Type", "text/html")], body: Data("<img src=/nope.png>".utf8))
                }
                let broken = try await WebCacheProcess.run(
                    ["preload", origin.url("/broken.html").absoluteString] + dir)
                #expect(broken.status == 69)
                #expect(broken.output.contains("incomplete") && broken.output.contains("nope.png: HTTP 404"))
            }
        }
    }

    @Test("demo tells the whole story and every resource comes back from the cache")
    func demo() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let run = try await WebCacheProcess.run(["demo", "--latency", "5", "--cache-dir", directory.url.path])
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.contains("The website is gone"))
        #expect(run.output.contains("49 of 49 resources came from the cache"))
        #expect(run.output.contains("webcache proxy --cache-dir \(directory.url.path)"))
    }
}
