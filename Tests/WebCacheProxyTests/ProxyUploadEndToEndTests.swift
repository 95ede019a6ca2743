import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebCache
import WebCacheNIO
import WebCacheProxy
import WebCacheStore
import WebCacheTestSupport

/// Uploads through a proxy on a socket to origins on sockets: the body goes through whole and
/// byte for byte, and a client is read only as fast as the origin takes its body.
@Suite("The caching proxy, end to end: uploads", .serialized)
struct ProxyUploadEndToEndTests {
    @Test("a 24 MB upload goes through to the origin byte for byte, neither refused nor held whole")
    func wholeUpload() async throws {
        let body = Fixtures.bytes(24_000_000) { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }
        try await TestOrigin.with { origin in
            origin.route("/up") { request in .text("got \(request.body.count)") }
            try await ProxyTests.withProxy(origin) { port, client in
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/up")
                request.method = .POST
                request.body = .bytes(ByteBuffer(bytes: body))
                let response = try await client.execute(request, timeout: .seconds(60))
                let text = String(buffer: try await response.body.collect(upTo: 1 << 10))
                #expect(response.status.code == 200)
                #expect(text == "got 24000000")
                let received = origin.requests(to: "/up").first
                #expect(received.map { byteDifference($0.body, body) == nil } == true)
            }
        }
    }

    @Test("a client uploading to an origin that stops reading is itself stopped, not buffered without end")
    func backPressure() async throws {
        let origin = EarlyAnswerOrigin(stopReadingAfter: 1 << 20)
        try await origin.start()
        do {
            try await Self.withProxy(upstream: origin.url("/")) { port in
                let connection = try RawHTTPClient.sendWithoutReading(
                    port: port, "POST /up HTTP/1.1\r\nHost: origin.test\r\nContent-Length: 200000000\r\n\r\n")
                defer { RawHTTPClient.close(connection) }
                let sent = await RawHTTPClient.sendUntilStalled(
                    connection, String(repeating: "u", count: 65_536), limit: 200_000_000, stalled: 1)
                // Socket buffers on the way (client, proxy, origin) take some megabytes; the
                // proxy itself holds at most 256 KiB and a read.
                #expect(sent < 40_000_000, "\(sent) bytes of the body were taken while the origin read none")
                #expect(origin.bytesReceived >= 1 << 20)
            }
        } catch {
            Issue.record(error)
        }
        try await origin.stop()
    }

    @Test("a chunked upload that passes the largest body accepted gets 413; the origin never gets it whole")
    func pastTheLimit() async throws {
        try await TestOrigin.with { origin in
            origin.route("/up") { request in .text("got \(request.body.count)") }
            try await Self.withProxy(upstream: origin.url("/"), maximumBodySize: 2_000_000) { port in
                let connection = try RawHTTPClient.sendWithoutReading(
                    port: port, "POST /up HTTP/1.1\r\nHost: origin.test\r\nTransfer-Encoding: chunked\r\n\r\n")
                defer { RawHTTPClient.close(connection) }
                let chunk = "10000\r\n" + String(repeating: "u", count: 65_536) + "\r\n"
                for _ in 0..<48 { RawHTTPClient.sendMore(connection, chunk) }
                RawHTTPClient.sendMore(connection, "0\r\n\r\n")
                let answer = await RawHTTPClient.receiveUntilClosed(connection, timeout: 10) ?? ""
                #expect(answer.hasPrefix("HTTP/1.1 413 "), "\(answer.prefix(200))")
                #expect(answer.contains("larger than 2000000 bytes"))
                #expect(origin.count("/up") == 0, "the origin got the body whole")
            }
        }
    }

    /// Runs a proxy in front of `upstream` on a port of its own, and stops it afterwards. The
    /// origin has two seconds to take more of a body (a stalled one then fails the exchange).
    static func withProxy(
        upstream: URL, maximumBodySize: Int = .max, _ body: (Int) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let network = try SwiftNIOOrigin(timeout: .seconds(2))
        let cache = try HTTPCache(
            configuration: .init(store: CacheStore.Configuration(directory: directory.url), rules: .shared),
            origin: network)
        var configuration = ProxyConfiguration(port: 0, upstream: upstream)
        configuration.maximumRequestBodySize = maximumBodySize
        let proxy = CachingProxy(cache: cache, configuration: configuration)
        let serving = Task { try await proxy.run() }
        do {
            try await body(try await ProxyTests.boundPort(of: proxy))
        } catch {
            serving.cancel()
            _ = await serving.result
            try? await network.shutdown()
            throw error
        }
        serving.cancel()
        _ = await serving.result
        try await network.shutdown()
    }
}
