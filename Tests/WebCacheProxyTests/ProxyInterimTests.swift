import Foundation
import HTTPTypes
import NIOCore
import NIOEmbedded
import Testing
import WebCache
import WebCacheTestSupport

@testable import WebCacheProxy

@Suite("Interim responses through the proxy (RFC 9110 §15.2)", .serialized)
struct ProxyInterimTests {
    @Test(
        "103 Early Hints reach an HTTP/1.1 client before the final response, in order; never stored, replayed, merged, or sent to HTTP/1.0"
    )
    func earlyHints() async throws {
        try await TestOrigin.with { origin in
            for path in ["/page", "/old"] {
                origin.route(path) { _ in
                    var response = TestOrigin.Response.text("page", headers: [("Cache-Control", "max-age=600")])
                    response.interim = [
                        (103, [("Link", "</style.css>; rel=preload; as=style"), ("X-My-Header", "hint")]), (102, []),
                    ]
                    return response
                }
            }
            try await ProxyTests.withProxy(origin) { port, _ in
                let first = try await RawHTTPClient.exchange(
                    port: port, "GET /page HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(ProxyEdgeTests.responses(in: first) == ["103", "102", "200"])
                #expect(first.hasPrefix("HTTP/1.1 103 Early Hints\r\n"))
                #expect(first.contains("Link: </style.css>; rel=preload; as=style\r\n"))
                let final = try #require(first.range(of: "HTTP/1.1 200")).lowerBound
                #expect(!first[final...].contains("X-My-Header"), "the hint's fields stay out of the final response")

                let hit = try await RawHTTPClient.exchange(
                    port: port, "GET /page HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                #expect(ProxyEdgeTests.responses(in: hit) == ["200"], "a hit replays no interim response")
                #expect(hit.contains("Cache-Status: WebCache; hit") && !hit.contains("X-My-Header"))

                let old = try await RawHTTPClient.exchange(port: port, "GET /old HTTP/1.0\r\nHost: x\r\n\r\n")
                #expect(
                    ProxyEdgeTests.responses(in: old.replacingOccurrences(of: "HTTP/1.0 ", with: "HTTP/1.1 ")) == [
                        "200"
                    ])
                #expect(!old.contains(" 103 "))
                #expect(origin.count("/page") == 1 && origin.count("/old") == 1)
            }
        }
    }

    @Test("interim responses to a client that is not reading (its connection not writable) are dropped, not held")
    func notWritable() throws {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        let forwarding = InterimForwarding(channel: channel)
        let hint = HTTPResponse(
            status: .init(code: 103), headerFields: [HTTPField.Name("Link")!: "</a.css>; rel=preload"])
        forwarding.forward(hint)
        channel.embeddedEventLoop.run()
        #expect(
            try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) }?.hasPrefix("HTTP/1.1 103") == true)
        channel.isWritable = false
        for _ in 0..<1_000 { forwarding.forward(hint) }
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        channel.isWritable = true
        forwarding.forward(hint)
        channel.embeddedEventLoop.run()
        #expect(try channel.readOutbound(as: ByteBuffer.self) != nil)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }
}
