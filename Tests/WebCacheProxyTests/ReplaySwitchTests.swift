import Foundation
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
            // The miss first, and its entry into the index: its arrival changes the store's
            // revision, which lets a kept answer go, and a writer slowed by a loaded machine
            // could land it among the hits counted below. Then three hits, pipelined.
            _ = try await connection.answer(to: "GET /a HTTP/1.1\r\nHost: test\r\n\r\n")
            await server.cache.store.entriesOnTheirWayWritten()
            for _ in 0..<3 {
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

    @Test("an answer whose Age has moved on is made again and kept at once, not after two more requests")
    func keptAgainAfterItLapses() async throws {
        // A whole second, as the Date field the cache gives the response: its Age is then exact.
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        try await SocketlessProxy.with(clock: clock) { server in
            let connection = try await server.connect()
            func get() async throws -> String? {
                try await connection.answer(to: "GET /a HTTP/1.1\r\nHost: test\r\n\r\n").field("Age")
            }
            // A miss, a hit only noted, a hit kept, a hit replayed. The miss's entry reaches the
            // index first (its arrival changes the store's revision, which lets a kept answer go).
            _ = try await get()
            await server.cache.store.entriesOnTheirWayWritten()
            for _ in 0..<3 { #expect(try await get() == "0") }
            #expect(server.proxy.answers.count == 1)
            clock.advance(1.1)
            let aged = try await get()
            #expect(server.proxy.answers.count == 1, "the answer with the new Age is kept")
            #expect(try await get() == aged)
            #expect(aged == "1" && server.origin.total == 1)
            await connection.close()
        }
    }
}
