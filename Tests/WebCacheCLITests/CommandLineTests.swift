import Foundation
import Testing
import WebCacheTestSupport

/// Runs the built `webcache` executable.
struct WebCacheProcess {
    static var executable: URL {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("webcache")
        if FileManager.default.isExecutableFile(atPath: besideTests.path) { return besideTests }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/debug/webcache")
    }

    struct Result: Sendable {
        var status: Int32
        var output: String
        var error: String
    }

    /// Runs `webcache` with `arguments` to its end, waiting on a thread of its own (a child
    /// process can take seconds; see ``onOwnThread(_:)``).
    static func run(_ arguments: [String]) async throws -> Result {
        try await onOwnThread { try blockingRun(arguments) }
    }

    private static func blockingRun(_ arguments: [String]) throws -> Result {
        let process = try ChildProcess(executable.path, arguments, output: .pipe, error: .pipe)
        let outputData = process.standardOutput?.readDataToEndOfFile() ?? Data()
        let errorData = process.standardError?.readDataToEndOfFile() ?? Data()
        let status = process.waitUntilExit()
        return Result(
            status: status, output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self))
    }
}

@Suite("The webcache command line, run as a process")
struct CommandLineTests {
    @Test("get, ls, stats, explain, rm and purge against a real origin")
    func commands() async throws {
        let origin = TestOrigin()
        try await origin.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        origin.route("/page") { _ in
            .text("hello from the origin", headers: [("Cache-Control", "max-age=600"), ("ETag", "\"p1\"")])
        }
        let url = origin.url("/page").absoluteString
        let dir = ["--cache-dir", directory.url.path]

        let first = try await WebCacheProcess.run(["get", "-i", url] + dir)
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.hasPrefix("HTTP/1.1 200"))
        #expect(first.output.contains("Cache-Status: WebCache; fwd=uri-miss"))
        #expect(first.output.hasSuffix("hello from the origin"))
        let second = try await WebCacheProcess.run(["get", "-i", url] + dir)
        #expect(second.output.contains("Cache-Status: WebCache; hit"))
        #expect(origin.count("/page") == 1)
        let body = try await WebCacheProcess.run(["get", url] + dir)
        #expect(body.output == "hello from the origin")

        let list = try await WebCacheProcess.run(["ls"] + dir)
        #expect(list.output.contains(url) && list.output.contains("fresh for"))
        let stats = try await WebCacheProcess.run(["stats"] + dir)
        #expect(stats.output.contains("entries:   1"))
        #expect(stats.output.contains("3 — 2 hits, 1 misses"))
        let explain = try await WebCacheProcess.run(["explain", url] + dir)
        #expect(explain.output.contains("decision: serve from cache"))

        try await origin.stop()
        let offline = try await WebCacheProcess.run(["get", url] + dir)
        #expect(offline.status == 0 && offline.output == "hello from the origin")
        let miss = try await WebCacheProcess.run(["get", origin.url("/elsewhere").absoluteString] + dir)
        #expect(miss.status == 69)
        #expect(miss.error.hasPrefix("webcache: ") && miss.error.contains("unreachable"))

        let removed = try await WebCacheProcess.run(["rm", url] + dir)
        #expect(removed.output == "removed 1 entry\n")
        let purged = try await WebCacheProcess.run(["purge", "--all"] + dir)
        #expect(purged.status == 0)
    }

    @Test(
        "bad input gets one line and a documented exit code",
        arguments: [
            (["get", "not-a-url"], Int32(64)),
            (["get", "--mode", "sometimes", "http://127.0.0.1:9/"], Int32(64)),
            (["get", "--config", "/nonexistent/webcache.yaml", "http://127.0.0.1:9/"], Int32(64)),
            (["rm"], Int32(64)),
            (["purge"], Int32(64)),
            (["get", "--cache-dir", "/proc/webcache-cannot-be-here", "http://127.0.0.1:9/"], Int32(73)),
        ])
    func badInput(arguments: [String], status: Int32) async throws {
        let result = try await WebCacheProcess.run(arguments)
        #expect(result.status == status, "\(result.error)")
        #expect(!result.error.isEmpty)
        #expect(!result.error.contains("Fatal error"))
    }

    @Test("webcache get -r prints only the bytes asked for")
    func commandLine() async throws {
        try await TestOrigin.with { origin in
            origin.route("/t") { _ in .text("0123456789abcdef", headers: [("Cache-Control", "max-age=600")]) }
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let dir = ["--cache-dir", directory.url.path]
            let url = origin.url("/t").absoluteString
            #expect(try await WebCacheProcess.run(["get", url] + dir).output == "0123456789abcdef")
            let part = try await WebCacheProcess.run(["get", "-i", "-r", "10-", url] + dir)
            #expect(part.output.hasPrefix("HTTP/1.1 206") && part.output.contains("Content-Range: bytes 10-15/16"))
            #expect(part.output.hasSuffix("\r\n\r\nabcdef"))
            let bad = try await WebCacheProcess.run(["get", "-r", "x-y", url] + dir)
            #expect(bad.status == 64)
        }
    }
}
