import Foundation
import Testing
import WebCacheDemo
import WebCacheTestSupport

@Suite("webcache get, stats, explain and preload --refresh while the origin is gone", .serialized)
struct OfflineCommandLineTests {
    @Test("get answers a stale copy at once, stats and explain show the unreachable origin")
    func getOffline() async throws {
        let origin = TestOrigin()
        try await origin.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let dir = ["--cache-dir", directory.url.path]
        origin.route("/page") { _ in .text("stored page", headers: [("Cache-Control", "no-cache"), ("ETag", "\"p\"")]) }
        let url = origin.url("/page").absoluteString
        #expect(try await WebCacheProcess.run(["get", url] + dir).status == 0)
        try await origin.stop()

        let start = ContinuousClock.now
        let offline = try await WebCacheProcess.run(["get", "-i", url] + dir)
        let elapsed = ContinuousClock.now - start
        #expect(offline.status == 0, "\(offline.error)")
        #expect(offline.output.contains("detail=offline") && offline.output.hasSuffix("stored page"))
        #expect(elapsed < .seconds(3), "webcache get took \(elapsed) offline")

        let miss = try await WebCacheProcess.run(["get", origin.url("/other").absoluteString] + dir)
        let sinceFailure = ContinuousClock.now - start
        #expect(miss.status == 69)
        #expect(miss.error.contains("unreachable"))

        let stats = try await WebCacheProcess.run(["stats"] + dir)
        #expect(stats.output.contains("UNREACHABLE ORIGIN"))
        #expect(stats.output.contains("http://127.0.0.1:\(origin.port)"))
        // The miss skips the origin only within 1 s of the failure (the first backoff): two
        // processes launched on a loaded machine can take longer, and then it rightly tries again.
        if sinceFailure < .seconds(1) {
            #expect(stats.output.contains("1 answered without trying an unreachable origin"), "\(stats.output)")
        }
        let explain = try await WebCacheProcess.run(["explain", url] + dir)
        #expect(explain.output.contains("origin: http://127.0.0.1:\(origin.port) unreachable"))
        #expect(explain.output.contains("offline (personal posture): the stored response would be served"))
    }

    @Test("preload --refresh while offline keeps every page as it was and says so; the manifests stay whole")
    func refreshOffline() async throws {
        let site = try await SampleSiteServer.start(cacheControl: "no-cache")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let dir = ["--cache-dir", directory.url.path]
        let index = site.baseURL.appendingPathComponent("index.html").absoluteString
        let first = try await WebCacheProcess.run(["preload", index, "--depth", "1"] + dir)
        #expect(first.status == 0, "\(first.error)")
        let pinnedBefore = try await WebCacheProcess.run(["stats"] + dir).output.split(separator: "\n").first {
            $0.hasPrefix("entries:")
        }
        try await site.stop()

        let refresh = try await WebCacheProcess.run(["preload", "--refresh", index, "--depth", "1"] + dir)
        #expect(refresh.status == 0, "\(refresh.output) \(refresh.error)")
        #expect(
            refresh.output.split(separator: "\n").filter { $0.contains("kept as it was (offline), pinned") }.count == 3,
            "\(refresh.output)")
        #expect(refresh.output.contains("3 page(s) kept as they were"))
        let pinnedAfter = try await WebCacheProcess.run(["stats"] + dir).output.split(separator: "\n").first {
            $0.hasPrefix("entries:")
        }
        #expect(pinnedAfter == pinnedBefore)
    }
}
