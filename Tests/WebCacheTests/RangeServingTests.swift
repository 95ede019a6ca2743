import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

@Suite("Ranges served from stored responses, through every front door", .serialized)
struct RangeServingTests {
    /// 200,000 letters, each depending on its position (ASCII, so a raw exchange reads it back
    /// byte for byte).
    static let media = Data((0..<200_000).map { (position: Int) -> UInt8 in
        let mixed: Int = position &* 7 &+ (position >> 8)
        return UInt8(65 + mixed % 26)
    })

    static func routeMedia(_ origin: TestOrigin) {
        origin.route("/clip.webm") { _ in
            TestOrigin.Response(
                headers: [("Content-Type", "video/webm"), ("Cache-Control", "max-age=600"), ("ETag", "\"clip-1\""),
                    ("Last-Modified", "Fri, 20 Nov 2026 12:00:00 GMT")],
                body: media)
        }
    }

    @Test("the engine answers single ranges, several ranges, unsatisfiable ranges and If-Range from the store")
    func engine() async throws {
        try await EngineHarness.run { h in
            Self.routeMedia(h.origin)
            let whole = try await h.get("/clip.webm")
            #expect(whole.head.status.code == 200 && whole.body == Self.media)
            let stored = try await h.get("/clip.webm")
            #expect(stored.head.headerFields[.acceptRanges] == "bytes")

            let first = try await h.get("/clip.webm", ["Range: bytes=0-1"])
            #expect(first.head.status.code == 206)
            #expect(first.head.headerFields[.contentRange] == "bytes 0-1/200000")
            #expect(first.body == Self.media.prefix(2))
            #expect(first.isFromCache)

            let seek = try await h.get("/clip.webm", ["Range: bytes=150000-"])
            #expect(seek.head.headerFields[.contentRange] == "bytes 150000-199999/200000")
            #expect(seek.body == Self.media.subdata(in: 150_000..<200_000))
            #expect(seek.head.headerFields[.contentLength] == "50000")

            let suffix = try await h.get("/clip.webm", ["Range: bytes=-10"])
            #expect(suffix.body == Self.media.suffix(10))

            let several = try await h.get("/clip.webm", ["Range: bytes=0-9, 100-109"])
            #expect(several.head.status.code == 206)
            let contentType = try #require(several.head.headerFields[.contentType])
            #expect(contentType.hasPrefix("multipart/byteranges; boundary="))
            let boundary = String(contentType.dropFirst("multipart/byteranges; boundary=".count))
            var expected = Data("\r\n--\(boundary)\r\nContent-Type: video/webm\r\nContent-Range: bytes 0-9/200000\r\n\r\n".utf8)
            expected.append(Self.media.prefix(10))
            expected.append(Data("\r\n--\(boundary)\r\nContent-Type: video/webm\r\nContent-Range: bytes 100-109/200000\r\n\r\n".utf8))
            expected.append(Self.media.subdata(in: 100..<110))
            expected.append(Data("\r\n--\(boundary)--\r\n".utf8))
            #expect(several.body == expected)

            let beyond = try await h.get("/clip.webm", ["Range: bytes=300000-"])
            #expect(beyond.head.status.code == 416)
            #expect(beyond.head.headerFields[.contentRange] == "bytes */200000")
            #expect(beyond.body.isEmpty)

            let changed = try await h.get("/clip.webm", ["Range: bytes=0-9", "If-Range: \"clip-0\""])
            #expect(changed.head.status.code == 200 && changed.body == Self.media)
            let same = try await h.get("/clip.webm", ["Range: bytes=0-9", "If-Range: \"clip-1\""])
            #expect(same.head.status.code == 206 && same.body.count == 10)

            // Preconditions first: a matching If-None-Match is a 304 whatever Range says.
            let notModified = try await h.get("/clip.webm", ["Range: bytes=0-9", "If-None-Match: \"clip-1\""])
            #expect(notModified.head.status.code == 304)
            let invalid = try await h.get("/clip.webm", ["Range: bytes=9-0"])
            #expect(invalid.head.status.code == 200 && invalid.body.count == Self.media.count)
            #expect(h.origin.count("/clip.webm") == 1)
        }
    }

    @Test("the proxy sends ranges of a large stored body from its file, again and again, byte for byte")
    func proxy() async throws {
        try await TestOrigin.with { origin in
            Self.routeMedia(origin)
            try await ProxyTests.withProxy(origin) { port, _ in
                func get(_ range: String?) async throws -> String {
                    let field = range.map { "Range: \($0)\r\n" } ?? ""
                    return try await RawHTTPClient.exchange(port: port, "GET /clip.webm HTTP/1.1\r\nHost: x\r\n\(field)Connection: close\r\n\r\n")
                }
                _ = try await get(nil)
                _ = try await get(nil)  // the body is verified and now goes from its file
                for _ in 0..<3 {
                    let answer = try await get("bytes=100000-199998")
                    #expect(answer.hasPrefix("HTTP/1.1 206"))
                    #expect(answer.contains("Content-Range: bytes 100000-199998/200000"))
                    let headEnd = try #require(answer.range(of: "\r\n\r\n"))
                    #expect(Data(answer[headEnd.upperBound...].utf8) == Self.media.subdata(in: 100_000..<199_999))
                }
                #expect(origin.count("/clip.webm") == 1)
            }
        }
    }

    /// An origin that answers ranges itself (one range per request), as media servers do.
    static func routeRangedMedia(_ origin: TestOrigin) {
        origin.route("/ranged.webm") { request in
            let headers = [("Content-Type", "video/webm"), ("Cache-Control", "max-age=600"), ("ETag", "\"r1\""), ("Accept-Ranges", "bytes")]
            guard let piece = rangedPiece(of: media, for: request.header("Range")) else { return TestOrigin.Response(headers: headers, body: media) }
            return TestOrigin.Response(status: 206, headers: headers + [("Content-Range", piece.contentRange)], body: media.subdata(in: piece.range))
        }
    }

    @Test("a media range that misses goes to the origin as sent; the rest follows in the background, and the next ranges are hits")
    func rangeMissCompletes() async throws {
        try await EngineHarness.run { h in
            Self.routeRangedMedia(h.origin)
            let first = try await h.get("/ranged.webm", ["Range: bytes=0-1"])
            #expect(first.head.status.code == 206)
            #expect(first.body == Self.media.prefix(2))
            #expect(h.origin.requests(to: "/ranged.webm").first?.header("Range") == "bytes=0-1")
            await h.cache.waitForBackgroundWork()
            #expect(h.origin.count("/ranged.webm") == 2)
            #expect(h.origin.requests(to: "/ranged.webm").last?.header("Range") == "bytes=2-", "only the rest of the stored prefix")
            let seek = try await h.get("/ranged.webm", ["Range: bytes=150000-150099"])
            #expect(seek.head.status.code == 206 && seek.isFromCache)
            #expect(seek.body == Self.media.subdata(in: 150_000..<150_100))
            #expect(h.origin.count("/ranged.webm") == 2)
        }
    }

    @Test("a player that drops its connection right after a media range (as browsers do at a seek) does not stop the rest from being stored")
    func droppedClientStillCompletes() async throws {
        try await TestOrigin.with { origin in
            Self.routeRangedMedia(origin)
            try await ProxyTests.withProxy(origin) { port, _ in
                let dropped = try RawHTTPClient.sendWithoutReading(port: port, "GET /ranged.webm HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\n\r\n")
                RawHTTPClient.close(dropped)
                var seek = ""
                for _ in 0..<100 where !seek.contains("Cache-Status: WebCache; hit") {
                    try await Task.sleep(for: .milliseconds(50))
                    seek = try await RawHTTPClient.exchange(port: port, "GET /ranged.webm HTTP/1.1\r\nHost: x\r\nRange: bytes=150000-150009\r\nCache-Control: only-if-cached\r\nConnection: close\r\n\r\n")
                }
                #expect(seek.hasPrefix("HTTP/1.1 206") && seek.contains("Cache-Status: WebCache; hit"))
                #expect(seek.hasSuffix(String(decoding: Self.media.subdata(in: 150_000..<150_010), as: UTF8.self)))
                #expect(origin.count("/ranged.webm") == 2, "the range, then the rest of the body once")
                #expect(origin.requests(to: "/ranged.webm").last?.header("Range") == "bytes=2-")
            }
        }
    }

    @Test("a media range of the whole body (bytes=0-) is stored as the complete response; nothing more is fetched")
    func wholeRangeStored() async throws {
        try await EngineHarness.run { h in
            Self.routeRangedMedia(h.origin)
            let first = try await h.get("/ranged.webm", ["Range: bytes=0-"])
            #expect(first.head.status.code == 206 && first.body == Self.media)
            await h.cache.waitForBackgroundWork()
            let whole = try await h.get("/ranged.webm")
            #expect(whole.isFromCache && whole.head.status.code == 200 && whole.body == Self.media)
            let seek = try await h.get("/ranged.webm", ["Range: bytes=150000-"])
            #expect(seek.isFromCache && seek.body == Self.media.suffix(from: 150_000))
            #expect(h.origin.count("/ranged.webm") == 1)
        }
    }

    @Test("webcache get -r prints only the bytes asked for")
    func commandLine() async throws {
        try await TestOrigin.with { origin in
            origin.route("/t") { _ in .text("0123456789abcdef", headers: [("Cache-Control", "max-age=600")]) }
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let dir = ["--cache-dir", directory.url.path]
            let url = origin.url("/t").absoluteString
            #expect(try WebCacheProcess.run(["get", url] + dir).output == "0123456789abcdef")
            let part = try WebCacheProcess.run(["get", "-i", "-r", "10-", url] + dir)
            #expect(part.output.hasPrefix("HTTP/1.1 206") && part.output.contains("Content-Range: bytes 10-15/16"))
            #expect(part.output.hasSuffix("\r\n\r\nabcdef"))
            let bad = try WebCacheProcess.run(["get", "-r", "x-y", url] + dir)
            #expect(bad.status == 64)
        }
    }
}
