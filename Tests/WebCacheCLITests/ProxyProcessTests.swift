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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var logged = ""
        for _ in 0..<200 where !logged.contains("listening on") && process.isRunning {
            try await Task.sleep(for: .milliseconds(50))
            logged = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        }
        process.terminate()
        await onOwnThread { process.waitUntilExit() }
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
}
