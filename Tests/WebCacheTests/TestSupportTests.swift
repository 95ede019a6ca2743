import Foundation
import NIOCore
import NIOPosix
import Testing
import WebCacheTestSupport

/// The helpers other tests' verdicts rest on.
@Suite("Test support")
struct TestSupportTests {
    @Test("byteDifference: nil only for the same bytes; otherwise the lengths and the first differing byte")
    func byteDifferences() {
        let body = Fixtures.patternedBytes(300_000)
        #expect(byteDifference(body, body) == nil)
        #expect(byteDifference([UInt8](), Data()) == nil)
        var changed = body
        changed[123_456] &+= 1
        #expect(byteDifference(changed, body)?.contains("300000 bytes where 300000 were expected") == true)
        #expect(byteDifference(changed, body)?.contains("first difference at byte 123456") == true)
        #expect(byteDifference(body.prefix(10), body)?.contains("at byte 10: (end) instead of") == true)
        #expect(byteDifference(body, body.prefix(10))?.hasSuffix("instead of (end)") == true)
    }

    @Test("onOwnThread and inBackground return what their work returns, and pass on its error")
    func threads() async throws {
        #expect(await onOwnThread { 6 * 7 } == 42)
        #expect(await inBackground { (1...100).reduce(0, +) } == 5050)
        struct Failure: Error {}
        await #expect(throws: Failure.self) { try await onOwnThread { () throws -> Int in throw Failure() } }
    }

    @Test("a stopped origin's port refuses connections, and no other server can take it")
    func stoppedOriginHoldsItsPort() async throws {
        let origin = TestOrigin()
        try await origin.start()
        let port = try #require(origin.url("/").port)
        try await origin.stop()
        await #expect(throws: (any Error).self) {
            _ = try await RawHTTPClient.exchange(port: port, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", timeout: 2)
        }
        let other = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        await #expect(throws: (any Error).self) {
            let taken = try await other.bind(host: "127.0.0.1", port: port).get()
            try await taken.close()
        }
    }
}
