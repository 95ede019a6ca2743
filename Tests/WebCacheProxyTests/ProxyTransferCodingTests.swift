import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebCacheTestSupport

/// A response sent in a transfer coding besides chunked, through the proxy on a socket: the
/// client gets the content and the cache stores it, never the coded bytes as if they were it.
@Suite("The caching proxy, end to end: transfer codings", .serialized)
struct ProxyTransferCodingTests {
    @Test("a gzip transfer coding is undone once: the miss and the hit after it carry the content")
    func gzipUndone() async throws {
        let content = Fixtures.bytes(100_000) { UInt8(truncatingIfNeeded: ($0 * 5) ^ ($0 >> 3)) }
        let coded = Deflated.compressed(content)
        var response = Array(
            "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n"
                .utf8)
        response += Array("\(String(coded.count, radix: 16))\r\n".utf8) + coded + Array("\r\n0\r\n\r\n".utf8)
        let origin = EarlyAnswerOrigin(answerAfter: 1, responseBytes: response)
        try await origin.start()
        do {
            try await ProxyUploadEndToEndTests.withProxy(upstream: origin.url("/")) { port in
                let client = HTTPClient(eventLoopGroupProvider: .singleton)
                do {
                    for attempt in ["miss", "hit"] {
                        let answer = try await client.execute(
                            HTTPClientRequest(url: "http://127.0.0.1:\(port)/coded"), timeout: .seconds(10))
                        let body = try await answer.body.collect(upTo: 1 << 20)
                        #expect(answer.status == .ok)
                        #expect(byteDifference(body.readableBytesView, content) == nil, "\(attempt)")
                        #expect(!answer.headers["transfer-encoding"].contains { $0.lowercased().contains("gzip") })
                        let status = answer.headers.first(name: "cache-status") ?? ""
                        #expect(status.contains(attempt == "hit" ? "hit" : "fwd=uri-miss"), "\(status)")
                    }
                } catch {
                    Issue.record(error)
                }
                try await client.shutdown()
            }
        } catch {
            Issue.record(error)
        }
        try await origin.stop()
    }
}
