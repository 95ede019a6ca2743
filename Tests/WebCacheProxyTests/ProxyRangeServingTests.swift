import Foundation
import Testing
import WebCacheTestSupport

@Suite("Ranges through the proxy: from stored files, and a seek that drops its connection", .serialized)
struct ProxyRangeServingTests {
    @Test("the proxy sends ranges of a large stored body from its file, again and again, byte for byte")
    func proxy() async throws {
        try await TestOrigin.with { origin in
            MediaFixture.route(origin)
            try await ProxyTests.withProxy(origin) { port, _ in
                func get(_ range: String?) async throws -> String {
                    let field = range.map { "Range: \($0)\r\n" } ?? ""
                    return try await RawHTTPClient.exchange(
                        port: port, "GET /clip.webm HTTP/1.1\r\nHost: x\r\n\(field)Connection: close\r\n\r\n")
                }
                _ = try await get(nil)
                _ = try await get(nil)  // the body is verified and now goes from its file
                for _ in 0..<3 {
                    let answer = try await get("bytes=100000-199998")
                    #expect(answer.hasPrefix("HTTP/1.1 206"))
                    #expect(answer.contains("Content-Range: bytes 100000-199998/200000"))
                    let headEnd = try #require(answer.range(of: "\r\n\r\n"))
                    #expect(
                        Data(answer[headEnd.upperBound...].utf8) == MediaFixture.media.subdata(in: 100_000..<199_999))
                }
                #expect(origin.count("/clip.webm") == 1)
            }
        }
    }

    @Test(
        "a player that drops its connection right after a media range (as browsers do at a seek) does not stop the rest from being stored"
    )
    func droppedClientStillCompletes() async throws {
        try await TestOrigin.with { origin in
            MediaFixture.routeRanged(origin)
            try await ProxyTests.withProxy(origin) { port, _ in
                let dropped = try RawHTTPClient.sendWithoutReading(
                    port: port, "GET /ranged.webm HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\n\r\n")
                RawHTTPClient.close(dropped)
                var seek = ""
                for _ in 0..<100 where !seek.contains("Cache-Status: WebCache; hit") {
                    try await Task.sleep(for: .milliseconds(50))
                    seek = try await RawHTTPClient.exchange(
                        port: port,
                        "GET /ranged.webm HTTP/1.1\r\nHost: x\r\nRange: bytes=150000-150009\r\nCache-Control: only-if-cached\r\nConnection: close\r\n\r\n"
                    )
                }
                #expect(seek.hasPrefix("HTTP/1.1 206") && seek.contains("Cache-Status: WebCache; hit"))
                #expect(
                    seek.hasSuffix(String(decoding: MediaFixture.media.subdata(in: 150_000..<150_010), as: UTF8.self)))
                #expect(origin.count("/ranged.webm") == 2, "the range, then the rest of the body once")
                #expect(origin.requests(to: "/ranged.webm").last?.header("Range") == "bytes=2-")
            }
        }
    }
}
