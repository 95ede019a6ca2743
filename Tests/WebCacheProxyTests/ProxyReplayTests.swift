import Foundation
import Testing
import WebCacheTestSupport

@Suite("The caching proxy: repeated answers to the same request", .serialized)
struct ProxyReplayTests {
    @Test(
        "the same request gets the same fresh answer until the entry or its Age changes; different requests are told apart"
    )
    func replayCache() async throws {
        try await TestOrigin.with { origin in
            let version = Counter()
            origin.route("/item") { request in
                if request.method == "PUT" { return .text("updated") }
                let current = version.next()
                return .text("v\(current)", headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v\(current)\"")])
            }
            let clock = TestClock(start: Date())
            try await ProxyTests.withProxy(origin, clock: clock) { port, _ in
                func send(_ request: String) async throws -> String {
                    try await RawHTTPClient.exchange(port: port, request + "Host: test\r\nConnection: close\r\n\r\n")
                }
                let miss = try await send("GET /item HTTP/1.1\r\n")
                #expect(miss.hasSuffix("\r\n\r\nv1") && miss.contains("fwd=uri-miss"))
                for _ in 0..<3 {
                    let hit = try await send("GET /item HTTP/1.1\r\n")
                    #expect(
                        hit.hasSuffix("\r\n\r\nv1")
                            && hit.firstLine(containing: "Cache-Status")?.contains("; hit") == true, "\(hit)")
                }
                let head = try await send("HEAD /item HTTP/1.1\r\n")
                #expect(head.hasSuffix("\r\n\r\n") && head.contains("Content-Length: 2\r\n"))
                let validated = try await send("GET /item HTTP/1.1\r\nIf-None-Match: \"v1\"\r\n")
                #expect(validated.hasPrefix("HTTP/1.1 304"), "\(validated)")
                let other = try await send("GET /item HTTP/1.1\r\nIf-None-Match: \"v0\"\r\n")
                #expect(other.hasPrefix("HTTP/1.1 200") && other.hasSuffix("v1"))
                let metrics = try await send("GET /_webcache/metrics HTTP/1.1\r\n")
                #expect(metrics.contains("webcache_hits_total 6"), "\(metrics)")

                // A second later the Age has moved on.
                clock.advance(1.1)
                let older = try await send("GET /item HTTP/1.1\r\n")
                #expect((older.firstLine(containing: "Age: ").flatMap { Int($0.dropFirst(5)) } ?? 0) >= 1, "\(older)")

                // An unsafe request invalidates the entry (RFC 9111 §4.4): the next GET is not repeated.
                let update = try await RawHTTPClient.exchange(
                    port: port, "PUT /item HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\nConnection: close\r\n\r\nnew")
                #expect(update.hasPrefix("HTTP/1.1 200"))
                let fetched = try await send("GET /item HTTP/1.1\r\n")
                #expect(fetched.hasSuffix("\r\n\r\nv2") && fetched.contains("fwd=uri-miss"), "\(fetched)")
                #expect(origin.requests(to: "/item").filter { $0.method == "GET" }.count == 2)
            }
        }
    }

    @Test(
        "large answers are repeated whole and unchanged, on parallel connections, from one unnamed file up to the size limit and from the entry's file above it",
        arguments: [128 << 10, 5 << 19])
    func largeReplayCache(size: Int) async throws {
        try await TestOrigin.with { origin in
            let version = Counter()
            origin.route("/large") { request in
                if request.method == "PUT" { return .text("updated") }
                let current = version.next()
                return .init(
                    headers: [("Cache-Control", "max-age=600")], body: Self.patternedBody(size: size, version: current))
            }
            let cacheDirectory = try TemporaryDirectory()
            defer { cacheDirectory.remove() }
            let clock = TestClock(start: Date())
            try await ProxyTests.withProxy(origin, cacheDirectory: cacheDirectory.url, clock: clock) { port, _ in
                func body(of response: String) -> Substring? {
                    response.range(of: "\r\n\r\n").map { response[$0.upperBound...] }
                }
                let request = "GET /large HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
                let first = try await RawHTTPClient.exchange(port: port, request)
                let expected = String(decoding: Self.patternedBody(size: size, version: 1), as: UTF8.self)
                #expect(body(of: first) == Substring(expected), "the answer from the origin")
                for _ in 0..<3 {
                    let answers = try await withThrowingTaskGroup(of: String.self) { group in
                        for _ in 0..<4 { group.addTask { try await RawHTTPClient.exchange(port: port, request) } }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    for answer in answers {
                        #expect(body(of: answer) == Substring(expected), "\(answer.count) bytes: \(answer.prefix(300))")
                        #expect(answer.firstLine(containing: "Cache-Status")?.contains("; hit") == true)
                    }
                }
                #if os(Linux)
                let wholeInOneFile = Self.openAnswerFiles(holdingBodyOf: size, in: cacheDirectory.url) > 0
                #expect(wholeInOneFile == (size < 2 << 20), "answers up to the limit (2 MiB) go from one unnamed file")
                #endif

                clock.advance(1.1)
                let older = try await RawHTTPClient.exchange(port: port, request)
                #expect(
                    (older.firstLine(containing: "Age: ").flatMap { Int($0.dropFirst(5)) } ?? 0) >= 1,
                    "a new head as the Age moves on")
                #expect(body(of: older) == Substring(expected))

                let update = try await RawHTTPClient.exchange(
                    port: port, "PUT /large HTTP/1.1\r\nHost: test\r\nContent-Length: 3\r\nConnection: close\r\n\r\nnew"
                )
                #expect(update.hasPrefix("HTTP/1.1 200"))
                let updated = String(decoding: Self.patternedBody(size: size, version: 2), as: UTF8.self)
                for _ in 0..<2 {
                    let fetched = try await RawHTTPClient.exchange(port: port, request)
                    #expect(body(of: fetched) == Substring(updated), "the new body once the entry changed")
                }
                #expect(origin.requests(to: "/large").filter { $0.method == "GET" }.count == 2)
            }
        }
    }

    /// Letters that change with the position and the version, so that a shifted, cut or stale
    /// byte shows.
    static func patternedBody(size: Int, version: Int) -> Data {
        Fixtures.patternedLetters(size, seed: version)
    }

    /// How many unnamed answer files this process has open in `directory` (or in memory) with
    /// a body of `size` bytes and a head.
    static func openAnswerFiles(holdingBodyOf size: Int, in directory: URL) -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { descriptor in
            let path = "/proc/self/fd/\(descriptor)"
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path),
                target.contains("/\(directory.lastPathComponent)/#") || target.contains("memfd:webcache-answer"),
                let file = FileHandle(forReadingAtPath: path)
            else { return false }
            defer { try? file.close() }
            let length = (try? file.seekToEnd()).map(Int.init) ?? 0
            return (size + 100..<size + 4096).contains(length)
        }.count
    }
}
