import Foundation
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

@testable import WebCacheProxy

@Suite("Fresh answers encoded once per entry and second, for requests that differ")
struct EncodedAnswersTests {
    @Test(
        "requests that differ in their bytes share the entry's encoding within a second; ranges, preconditions, HEAD and the next second do not"
    )
    func sharedWithinASecond() async throws {
        let clock = TestClock(start: Date())
        try await SocketlessProxy.with(clock: clock, configure: { $0.replaysAnswers = false }) { server in
            let connection = try await server.connect()
            var methods: [String] = []
            func send(_ method: String, _ extra: String = "") async throws -> ResponseReader.Response {
                methods.append(method)
                try await connection.send("\(method) /a HTTP/1.1\r\nHost: test\r\n\(extra)\r\n")
                let (answers, _) = try await connection.responses(methods.count, methods: methods)
                return try #require(answers.last)
            }
            func get(_ extra: String) async throws -> ResponseReader.Response { try await send("GET", extra) }
            _ = try await get("X-Request-Id: 1\r\n")  // the miss, from the origin
            #expect(server.proxy.encodedAnswers.count == 0)
            // The first hit may still come the engine's way while the store finishes the entry.
            _ = try await get("X-Request-Id: 2\r\n")
            let first = try await get("X-Request-Id: 3\r\nUser-Agent: one\r\n")
            #expect(first.field("Cache-Status")?.contains("hit") == true)
            // Kept once the entry is answered again within a second: here by the fourth request
            // at the latest (the second, when it came the engine's way, noted the entry).
            let second = try await get("X-Request-Id: 4\r\nUser-Agent: two\r\n")
            #expect(second == first, "the same entry in the same second: the same bytes")
            #expect(server.proxy.encodedAnswers.count == 1)
            let third = try await get("X-Request-Id: 5\r\nUser-Agent: three\r\n")
            #expect(third == first)
            #expect(server.proxy.encodedAnswers.count == 1)

            let range = try await get("Range: bytes=0-3\r\n")
            #expect(range.status == 206 && range.text == "body")
            let conditional = try await get("If-Modified-Since: Sat, 21 Nov 2026 00:00:00 GMT\r\n")
            #expect(conditional.status == 200)
            #expect(
                server.proxy.encodedAnswers.count == 1, "a range or a precondition makes the answer the request's own")

            let head = try await send("HEAD")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(server.proxy.encodedAnswers.count == 2)

            clock.advance(1.2)
            let later = try await get("X-Request-Id: 6\r\n")
            let ages = (first.field("Age").flatMap { Int($0) }, later.field("Age").flatMap { Int($0) })
            #expect(ages.0 != nil && ages.1 != nil && ages.1! > ages.0!, "the Age moved on: \(ages)")
            #expect(later.text == first.text)
            #expect(
                server.proxy.encodedAnswers.count == 2,
                "answered 1.2 s after its last answer, the entry is not likely to be asked for again within the second")
            let again = try await get("X-Request-Id: 7\r\n")
            #expect(again == later)
            #expect(server.proxy.encodedAnswers.count == 3, "the next second of Age is a new answer")
            #expect(server.origin.total == 1)
            await connection.close()
        }
    }

    @Test(
        "a change to the store gives a new encoding: an invalidated entry is fetched again, never answered from the old one"
    )
    func storeChange() async throws {
        let clock = TestClock(start: Date())
        try await SocketlessProxy.with(clock: clock) { server in
            let connection = try await server.connect()
            for id in 1...3 {
                try await connection.send("GET /b HTTP/1.1\r\nHost: test\r\nX-Request-Id: \(id)\r\n\r\n")
            }
            try await connection.send("DELETE /b HTTP/1.1\r\nHost: test\r\n\r\n")
            try await connection.send("GET /b HTTP/1.1\r\nHost: test\r\nX-Request-Id: 4\r\n\r\n")
            let (answers, _) = try await connection.responses(5, methods: ["GET", "GET", "GET", "DELETE", "GET"])
            try #require(answers.map(\.status) == [200, 200, 200, 200, 200])
            #expect(answers[4].field("Cache-Status")?.contains("hit") != true, "fetched again after the DELETE")
            #expect(server.origin.count("/b") == 3, "the first GET, the DELETE, and the GET after it")
            await connection.close()
        }
    }

    @Test(
        "ranges of a body sent from its file share one head within a second, each with its own Content-Range, length and bytes; preconditions and a failed If-Range do not share it"
    )
    func rangesShareAHead() async throws {
        let clock = TestClock(start: Date())
        let media = Fixtures.patternedBytes(300_000, seed: 11)
        let origin = InMemoryOrigin.serving(
            media, headers: [("Cache-Control", "max-age=600"), ("Content-Type", "video/mp4"), ("ETag", "\"v1\"")])
        try await SocketlessProxy.with(origin: origin, clock: clock, configure: { $0.replaysAnswers = false }) {
            server in
            let connection = try await server.connect()
            var sent = 0
            func get(_ extra: String) async throws -> ResponseReader.Response {
                sent += 1
                return try await connection.answer(
                    to: "GET /v.mp4 HTTP/1.1\r\nHost: test\r\nX-Request-Id: \(sent)\r\n\(extra)\r\n")
            }
            // The miss, then hits until the store has verified the body file.
            _ = try await get("")
            for _ in 0..<3 { _ = try await get("") }
            let before = server.proxy.encodedAnswers.count
            /// The fields that do not depend on the range, in order.
            func sharedFields(_ answer: ResponseReader.Response) -> [String] {
                answer.fields.filter { !["content-range", "content-length"].contains($0.name.lowercased()) }
                    .map { "\($0.name): \($0.value)" }
            }
            var first: ResponseReader.Response?
            for (header, range) in [
                ("bytes=0-65535", 0..<65_536), ("bytes=100000-199999", 100_000..<200_000),
                ("bytes=200000-", 200_000..<300_000), ("bytes=-70000", 230_000..<300_000),
                ("bytes=1000-70000", 1000..<70_001),
            ] {
                let answer = try await get("Range: \(header)\r\nIf-Range: \"v1\"\r\n")
                #expect(answer.status == 206)
                #expect(answer.field("Content-Range") == "bytes \(range.lowerBound)-\(range.upperBound - 1)/300000")
                #expect(answer.field("Content-Length") == String(range.count))
                #expect(byteDifference(answer.body, media.subdata(in: range)) == nil, "\(header)")
                if let first { #expect(sharedFields(answer) == sharedFields(first)) } else { first = answer }
            }
            #expect(server.proxy.encodedAnswers.count == before + 1, "one head for every range of the second")

            let small = try await get("Range: bytes=10-19\r\n")
            #expect(small.status == 206 && Data(small.body) == media.subdata(in: 10..<20))
            let failedIfRange = try await get("Range: bytes=0-99999\r\nIf-Range: \"v0\"\r\n")
            #expect(failedIfRange.status == 200)
            #expect(byteDifference(Data(failedIfRange.body), media) == nil)
            let notModified = try await get("Range: bytes=0-99999\r\nIf-None-Match: \"v1\"\r\n")
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            let several = try await get("Range: bytes=0-99999,200000-299999\r\n")
            #expect(several.status == 206 && several.field("Content-Type")?.hasPrefix("multipart/byteranges") == true)
            #expect(server.proxy.encodedAnswers.count == before + 1)

            clock.advance(1.2)
            let later = try await get("Range: bytes=100000-199999\r\n")
            #expect(later.status == 206)
            #expect(byteDifference(Data(later.body), media.subdata(in: 100_000..<200_000)) == nil)
            #expect(later.field("Age") != first?.field("Age"), "the next second of Age is a new head")
            #expect(server.origin.total == 1)
            await connection.close()
        }
    }
}
