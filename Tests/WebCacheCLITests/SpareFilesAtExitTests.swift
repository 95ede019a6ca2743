import Foundation
import Testing
import WebCacheTestSupport

/// A command that removes or evicts entries keeps their body files for new bodies only while it
/// runs: a short-lived process leaves none behind.
@Suite("Spare body files and short-lived commands")
struct SpareFilesAtExitTests {
    @Test("`webcache rm` and an eviction by `webcache get` leave no body file without an entry")
    func noneLeftBehind() async throws {
        let origin = TestOrigin()
        try await origin.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // Bodies above 16 KiB are files; 150 KB holds one of them.
        let body = String(repeating: "x", count: 100_000)
        for name in ["one", "two", "three"] {
            origin.route("/\(name)") { _ in .text(body, headers: [("Cache-Control", "max-age=600")]) }
        }
        let dir = ["--cache-dir", directory.url.path, "--disk-capacity", "150k"]
        let url = { (name: String) in origin.url("/\(name)").absoluteString }

        for name in ["one", "two"] {
            let result = try await WebCacheProcess.run(["get", url(name)] + dir)
            #expect(result.status == 0, "\(result.error)")
            // The second pushed the first out: its file was kept for a new body, then deleted at exit.
            #expect(bodyFiles(in: directory.url).count == 1)
        }
        let removed = try await WebCacheProcess.run(["rm", url("two")] + dir)
        #expect(removed.status == 0, "\(removed.error)")
        #expect(bodyFiles(in: directory.url).isEmpty)

        let third = try await WebCacheProcess.run(["get", url("three")] + dir)
        #expect(third.status == 0, "\(third.error)")
        #expect(third.output.count == 100_000)
        #expect(bodyFiles(in: directory.url).count == 1)
    }
}
