import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

@Suite("Ranges served from stored responses, through every front door", .serialized)
struct RangeServingTests {
    @Test("the engine answers single ranges, several ranges, unsatisfiable ranges and If-Range from the store")
    func engine() async throws {
        try await EngineHarness.run { h in
            MediaFixture.route(h.origin)
            let whole = try await h.get("/clip.webm")
            #expect(whole.head.status.code == 200 && whole.body == MediaFixture.media)
            let stored = try await h.get("/clip.webm")
            #expect(stored.head.headerFields[.acceptRanges] == "bytes")

            let first = try await h.get("/clip.webm", ["Range: bytes=0-1"])
            #expect(first.head.status.code == 206)
            #expect(first.head.headerFields[.contentRange] == "bytes 0-1/200000")
            #expect(first.body == MediaFixture.media.prefix(2))
            #expect(first.isFromCache)

            let seek = try await h.get("/clip.webm", ["Range: bytes=150000-"])
            #expect(seek.head.headerFields[.contentRange] == "bytes 150000-199999/200000")
            #expect(byteDifference(seek.body, MediaFixture.media.subdata(in: 150_000..<200_000)) == nil)
            #expect(seek.head.headerFields[.contentLength] == "50000")

            let suffix = try await h.get("/clip.webm", ["Range: bytes=-10"])
            #expect(suffix.body == MediaFixture.media.suffix(10))

            let several = try await h.get("/clip.webm", ["Range: bytes=0-9, 100-109"])
            #expect(several.head.status.code == 206)
            let contentType = try #require(several.head.headerFields[.contentType])
            #expect(contentType.hasPrefix("multipart/byteranges; boundary="))
            let boundary = String(contentType.dropFirst("multipart/byteranges; boundary=".count))
            var expected = Data(
                "\r\n--\(boundary)\r\nContent-Type: video/webm\r\nContent-Range: bytes 0-9/200000\r\n\r\n".utf8)
            expected.append(MediaFixture.media.prefix(10))
            expected.append(
                Data(
                    "\r\n--\(boundary)\r\nContent-Type: video/webm\r\nContent-Range: bytes 100-109/200000\r\n\r\n".utf8)
            )
            expected.append(MediaFixture.media.subdata(in: 100..<110))
            expected.append(Data("\r\n--\(boundary)--\r\n".utf8))
            #expect(several.body == expected)

            let beyond = try await h.get("/clip.webm", ["Range: bytes=300000-"])
            #expect(beyond.head.status.code == 416)
            #expect(beyond.head.headerFields[.contentRange] == "bytes */200000")
            #expect(beyond.body.isEmpty)

            let changed = try await h.get("/clip.webm", ["Range: bytes=0-9", "If-Range: \"clip-0\""])
            #expect(changed.head.status.code == 200 && changed.body == MediaFixture.media)
            let same = try await h.get("/clip.webm", ["Range: bytes=0-9", "If-Range: \"clip-1\""])
            #expect(same.head.status.code == 206 && same.body.count == 10)

            // Preconditions first: a matching If-None-Match is a 304 whatever Range says.
            let notModified = try await h.get("/clip.webm", ["Range: bytes=0-9", "If-None-Match: \"clip-1\""])
            #expect(notModified.head.status.code == 304)
            let invalid = try await h.get("/clip.webm", ["Range: bytes=9-0"])
            #expect(invalid.head.status.code == 200 && invalid.body.count == MediaFixture.media.count)
            #expect(h.origin.count("/clip.webm") == 1)
        }
    }

    @Test(
        "a media range that misses goes to the origin as sent; the rest follows in the background, and the next ranges are hits"
    )
    func rangeMissCompletes() async throws {
        try await EngineHarness.run { h in
            MediaFixture.routeRanged(h.origin)
            let first = try await h.get("/ranged.webm", ["Range: bytes=0-1"])
            #expect(first.head.status.code == 206)
            #expect(first.body == MediaFixture.media.prefix(2))
            #expect(h.origin.requests(to: "/ranged.webm").first?.header("Range") == "bytes=0-1")
            await h.cache.waitForBackgroundWork()
            #expect(h.origin.count("/ranged.webm") == 2)
            #expect(
                h.origin.requests(to: "/ranged.webm").last?.header("Range") == "bytes=2-",
                "only the rest of the stored prefix")
            let seek = try await h.get("/ranged.webm", ["Range: bytes=150000-150099"])
            #expect(seek.head.status.code == 206 && seek.isFromCache)
            #expect(byteDifference(seek.body, MediaFixture.media.subdata(in: 150_000..<150_100)) == nil)
            #expect(h.origin.count("/ranged.webm") == 2)
        }
    }

    @Test("a media range of a body larger than maximumEntrySize starts no whole-body fetch: it could not be stored")
    func noCompletionPastTheLimit() async throws {
        try await EngineHarness.run(adjust: { $0.store.maximumEntrySize = MediaFixture.media.count - 1 }) { h in
            MediaFixture.routeRanged(h.origin)
            let first = try await h.get("/ranged.webm", ["Range: bytes=0-1"])
            #expect(first.head.status.code == 206 && first.body == MediaFixture.media.prefix(2))
            await h.cache.waitForBackgroundWork()
            #expect(h.origin.count("/ranged.webm") == 1)
        }
    }

    @Test(
        "first bytes of twenty videos start at most four whole-body fetches in the background; one skipped is completed when asked again"
    )
    func backgroundCompletionsBounded() async throws {
        try await EngineHarness.run { h in
            let rest = OriginGate()
            for index in 0..<20 {
                h.origin.route("/v\(index).webm") { request in
                    let headers = [
                        ("Content-Type", "video/webm"), ("Cache-Control", "max-age=600"), ("ETag", "\"v\(index)\""),
                    ]
                    let piece = rangedPiece(of: MediaFixture.media, for: request.header("Range"))
                    var response = TestOrigin.Response(
                        status: piece == nil ? 200 : 206,
                        headers: headers + (piece.map { [("Content-Range", $0.contentRange)] } ?? []),
                        body: piece.map { MediaFixture.media.subdata(in: $0.range) } ?? MediaFixture.media)
                    // The rest of each body is held until every first range is answered.
                    if request.header("Range") == "bytes=2-" {
                        response.pauseAfter = 1
                        response.pauseUntil = rest
                    }
                    return response
                }
            }
            for index in 0..<20 {
                let first = try await h.get("/v\(index).webm", ["Range: bytes=0-1"])
                #expect(first.head.status.code == 206)
            }
            await rest.arrivals(4)
            rest.open()
            await h.cache.waitForBackgroundWork()
            let completed = (0..<20).filter { h.origin.count("/v\($0).webm") == 2 }
            #expect(completed.count == 4, "\(completed)")
            let skipped = try #require((0..<20).first { !completed.contains($0) })
            // A seek in one skipped misses, and starts its completion now that none is under way.
            let seek = try await h.get("/v\(skipped).webm", ["Range: bytes=150000-150099"])
            #expect(!seek.isFromCache)
            await h.cache.waitForBackgroundWork()
            let later = try await h.get("/v\(skipped).webm", ["Range: bytes=50000-50099"])
            #expect(later.isFromCache && later.body == MediaFixture.media.subdata(in: 50_000..<50_100))
        }
    }

    @Test("a media range of the whole body (bytes=0-) is stored as the complete response; nothing more is fetched")
    func wholeRangeStored() async throws {
        try await EngineHarness.run { h in
            MediaFixture.routeRanged(h.origin)
            let first = try await h.get("/ranged.webm", ["Range: bytes=0-"])
            #expect(first.head.status.code == 206 && first.body == MediaFixture.media)
            await h.cache.waitForBackgroundWork()
            let whole = try await h.get("/ranged.webm")
            #expect(whole.isFromCache && whole.head.status.code == 200 && whole.body == MediaFixture.media)
            let seek = try await h.get("/ranged.webm", ["Range: bytes=150000-"])
            #expect(seek.isFromCache)
            #expect(byteDifference(seek.body, MediaFixture.media.suffix(from: 150_000)) == nil)
            #expect(h.origin.count("/ranged.webm") == 1)
        }
    }

}
