import Testing
import WebCacheTestSupport

@testable import WebCacheProxy

@Suite("Answer replay (the byte-identical shortcut) can be turned off")
struct ReplaySwitchTests {
    @Test(
        "the same head four times: hits either way; an answer is kept only when replaysAnswers is on",
        arguments: [true, false])
    func sameHeadReplayed(replays: Bool) async throws {
        try await SocketlessProxy.with(configure: { $0.replaysAnswers = replays }) { server in
            let connection = try await server.connect()
            for _ in 0..<4 {
                try await connection.send("GET /a HTTP/1.1\r\nHost: test\r\n\r\n")
            }
            let (answers, _) = try await connection.responses(4)
            #expect(answers.map(\.status) == [200, 200, 200, 200])
            #expect(Set(answers.map(\.text)).count == 1)
            #expect(answers.dropFirst().allSatisfy { $0.field("Cache-Status")?.contains("hit") == true })
            #expect(server.origin.total == 1)
            #expect(server.proxy.answers.count == (replays ? 1 : 0))
            await connection.close()
        }
    }
}
