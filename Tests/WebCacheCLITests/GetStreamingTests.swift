import Foundation
import HTTPCaching
import Testing
import WebCacheTestSupport

@Suite("webcache get writes a body as it arrives")
struct GetStreamingTests {
    static let body = Fixtures.bytes(300_000) { UInt8(truncatingIfNeeded: $0 &* 7) }

    @Test(
        "the first bytes are on stdout before the origin has sent the rest; the whole body is stored (with either client)",
        arguments: [[], ["--client", "urlsession"]])
    func firstBytesAtOnce(client: [String]) async throws {
        try await TestOrigin.with { origin in
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let rest = origin.routeHeldBody("/download", Self.body, sendingFirst: 100_000)
            let process = try ChildProcess(
                WebCacheProcess.executable.path,
                ["get", origin.url("/download").absoluteString, "--cache-dir", directory.url.path] + client,
                output: .pipe)
            // Without a first write the read below would wait for the rest: it goes after 10 s.
            let openedLate = Locked(false)
            let opener = Task {
                try? await Task.sleep(for: .seconds(10))
                openedLate.withLock { $0 = true }
                rest.open()
            }
            let reader = try #require(process.standardOutput)
            let early = await onOwnThread { reader.availableData }
            let wroteBeforeTheRest = !openedLate.withLock { $0 }
            opener.cancel()
            rest.open()
            let remainder = await onOwnThread { reader.readDataToEndOfFile() }
            let status = await onOwnThread { process.waitUntilExit() }
            #expect(wroteBeforeTheRest, "nothing was written before the origin sent the rest")
            #expect(!early.isEmpty && early.count <= 100_000)
            #expect(status == 0)
            #expect(byteDifference(early + remainder, Self.body) == nil)
            let again = try await WebCacheProcess.run(
                ["get", "-i", origin.url("/download").absoluteString, "--cache-dir", directory.url.path])
            #expect(again.output.contains("Cache-Status: WebCache; hit"))
            #expect(origin.count("/download") == 1)
        }
    }

    @Test("a reader that closes the pipe early (head) ends get quietly: exit 74, nothing on stderr, no crash")
    func readerClosesThePipe() async throws {
        try await TestOrigin.with { origin in
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let large = Data(repeating: 7, count: 4_000_000)
            origin.route("/large") { _ in
                TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: large)
            }
            let process = try ChildProcess(
                WebCacheProcess.executable.path,
                ["get", origin.url("/large").absoluteString, "--cache-dir", directory.url.path],
                output: .pipe, error: .pipe)
            let reader = try #require(process.standardOutput)
            let first = await onOwnThread { reader.readData(ofLength: 1_000) }
            try reader.close()
            let errors = await onOwnThread { process.standardError?.readDataToEndOfFile() ?? Data() }
            let status = await onOwnThread { process.waitUntilExit() }
            #expect(first == large.prefix(1_000))
            #expect(status == 74, "a fatal error in FileHandle.write is 132 or 133")
            #expect(errors.isEmpty, "\(String(decoding: errors, as: UTF8.self))")
        }
    }

    @Test("--client urlsession refuses --cacert and --max-response-size, which URLSession cannot apply: exit 64")
    func urlSessionClientOptions() async throws {
        for extra in [["--cacert", "ca.pem"], ["--max-response-size", "1000"]] {
            let result = try await WebCacheProcess.run(
                ["get", "--client", "urlsession", "http://127.0.0.1:9/x"] + extra)
            #expect(result.status == 64, "\(extra)")
        }
    }

    @Test("a body the origin cuts short: exit 69, and stderr says after how many bytes")
    func cutShort() async throws {
        try await TestOrigin.with { origin in
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            origin.route("/cut") { _ in
                var response = TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: Self.body)
                response.cutAfter = 120_000
                return response
            }
            let result = try await WebCacheProcess.run(
                ["get", origin.url("/cut").absoluteString, "--cache-dir", directory.url.path])
            #expect(result.status == 69)
            #expect(result.error.contains("the body ended after"), "\(result.error)")
        }
    }

    @Test("--max-response-size: a longer body is cut there and the command fails; a larger bound lets it through")
    func maximumResponseSize() async throws {
        try await TestOrigin.with { origin in
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            origin.route("/large") { _ in TestOrigin.Response(headers: [("Cache-Control", "no-store")], body: Self.body)
            }
            let url = origin.url("/large").absoluteString
            let cut = try await WebCacheProcess.run(
                ["get", url, "--cache-dir", directory.url.path, "--max-response-size", "200000"])
            #expect(cut.status == 69)
            #expect(cut.error.contains("too large"), "\(cut.error)")
            let whole = try await WebCacheProcess.run(
                ["get", url, "--cache-dir", directory.url.path, "--max-response-size", "300000"])
            #expect(whole.status == 0, "\(whole.error)")
            let refused = try await WebCacheProcess.run(["get", url, "--max-response-size", "0"])
            #expect(refused.status == 64, "\(refused.error)")
        }
    }
}
