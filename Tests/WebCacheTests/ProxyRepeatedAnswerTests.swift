import Foundation
import Testing
import WebCacheTestSupport

@Suite("The caching proxy: repeated answers to the same request", .serialized)
struct ProxyRepeatedAnswerTests {
    @Test("the same request gets the same fresh answer until the entry or its Age changes; different requests are told apart")
    func repeatedAnswers() async throws {
        let origin = TestOrigin()
        try await origin.start()
        defer { Task { try? await origin.stop() } }
        let version = Counter()
        origin.route("/item") { request in
            if request.method == "PUT" { return .text("updated") }
            let current = version.next()
            return .text("v\(current)", headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v\(current)\"")])
        }
        try await ProxyTests.withProxy(origin) { port, _ in
            func send(_ request: String) async throws -> String {
                try await RawHTTPClient.exchange(port: port, request + "Host: test\r\nConnection: close\r\n\r\n")
            }
            let miss = try await send("GET /item HTTP/1.1\r\n")
            #expect(miss.hasSuffix("\r\n\r\nv1") && miss.contains("fwd=uri-miss"))
            for _ in 0..<3 {
                let hit = try await send("GET /item HTTP/1.1\r\n")
                #expect(hit.hasSuffix("\r\n\r\nv1") && hit.firstLine(containing: "Cache-Status")?.contains("; hit") == true, "\(hit)")
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
            try await Task.sleep(for: .milliseconds(1100))
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
