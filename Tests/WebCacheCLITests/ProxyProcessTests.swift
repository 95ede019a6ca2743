import Foundation
import Testing
import WebCacheTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `webcache proxy` as a process, for what only a process has: its limits.
@Suite("webcache proxy, run as a process", .serialized)
struct ProxyProcessTests {
    /// Starts `webcache proxy` after `ulimit` (a shell's options), waits until it listens, stops
    /// it with SIGTERM and returns what it logged.
    static func logOfProxy(ulimit: String) async throws -> String {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let log = directory.url.appendingPathComponent("proxy.log")
        let command =
            "ulimit \(ulimit) && exec '\(WebCacheProcess.executable.path)' proxy --listen 127.0.0.1:0 "
            + "--upstream http://127.0.0.1:9 --cache-dir '\(directory.url.path)/cache' 2>'\(log.path)'"
        let process = try ChildProcess("/bin/sh", ["-c", command])
        defer { if process.isRunning { process.terminate() } }
        var logged = ""
        for _ in 0..<200 where !logged.contains("listening on") && process.isRunning {
            try await Task.sleep(for: .milliseconds(50))
            logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
        process.terminate()
        _ = await onOwnThread { process.waitUntilExit() }
        return (try? String(contentsOf: log, encoding: .utf8)) ?? logged
    }

    @Test("the open-files limit is raised to the hard limit at start, and one too low for --max-connections is said")
    func openFilesLimit() async throws {
        // The child keeps this process's hard limit; its soft limit starts at 200.
        var limits = rlimit()
        #if canImport(Glibc)
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
        let resource = RLIMIT_NOFILE
        #endif
        #expect(getrlimit(resource, &limits) == 0)
        let hard = Int(clamping: limits.rlim_max)
        if hard > 1_000 {
            let raised = try await Self.logOfProxy(ulimit: "-S -n 200")
            let expected = hard == .max ? "unlimited" : String(hard)
            #expect(raised.contains("open files: up to \(expected)\n"), "\(raised)")
            #expect(raised.contains("listening on"))
        }
        let capped = try await Self.logOfProxy(ulimit: "-n 200")
        #expect(
            capped.contains(
                "open files: up to 200, enough for about 45 connections, not the 1024 of --max-connections"),
            "\(capped)")
        #expect(capped.contains("listening on"))
    }

    /// Runs `body` with the port of `webcache proxy` started with `flags` in front of `upstream`,
    /// then stops it with SIGTERM.
    static func withProxy(
        upstream: String, _ flags: [String], _ body: (Int) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let log = directory.url.appendingPathComponent("proxy.log")
        let process = try ChildProcess(
            WebCacheProcess.executable.path,
            ["proxy", "--listen", "127.0.0.1:0", "--upstream", upstream, "--cache-dir", directory.url.path + "/cache"]
                + flags,
            error: .file(log.path))
        defer { if process.isRunning { process.terminate() } }
        var port: Int?
        for _ in 0..<200 where port == nil && process.isRunning {
            try await Task.sleep(for: .milliseconds(50))
            let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            port = logged.components(separatedBy: "listening on 127.0.0.1:").dropFirst().first
                .flatMap { Int($0.prefix { $0.isNumber }) }
        }
        let logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        let listening = try #require(port, "the proxy did not start: \(logged)")
        try await body(listening)
        process.terminate()
        _ = await onOwnThread { process.waitUntilExit() }
    }

    @Test(
        "--max-response-size cuts a longer body at the origin, so the client sees it end early; by default it goes whole"
    )
    func maximumResponseSize() async throws {
        try await TestOrigin.with { origin in
            let body = String(repeating: "0123456789", count: 200_000)
            origin.route("/large") { _ in .text(body, headers: [("Cache-Control", "no-store")]) }
            let upstream = "http://127.0.0.1:\(origin.url("/").port ?? 0)"
            for (flags, whole) in [(["--max-response-size", "1000000"], false), ([], true)] {
                try await Self.withProxy(upstream: upstream, flags) { port in
                    let answer = try await RawHTTPClient.exchange(
                        port: port, "GET /large HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                    // Not the answer itself in a failure's message: it is 2 MB.
                    let received = answer.hasSuffix(body)
                    #expect(received == whole, "\(flags): \(answer.utf8.count) bytes")
                    #expect(answer.hasPrefix("HTTP/1.1 200"))
                }
            }
        }
    }
}
