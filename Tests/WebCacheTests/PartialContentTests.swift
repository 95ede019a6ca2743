import Foundation
import HTTPCaching
import HTTPTypes
import NIOConcurrencyHelpers
import Testing
import WebCache
import WebCacheTestSupport

@Suite("Parts stored and combined: 206s, bodies cut short, completing a prefix (RFC 9111 §3.3, §3.4)", .serialized)
struct PartialContentTests {
    static let body = MediaFixture.media

    /// `path` (`/data.bin`: ``body``, 200,000 bytes), ranges answered one at a time, with the
    /// entity tag `tag` gives.
    static func routeRanged(
        _ origin: TestOrigin, path: String = "/data.bin", body: Data = body,
        tag: @escaping @Sendable () -> String = { "\"d1\"" }
    ) {
        origin.route(path) { request in
            let headers = [
                ("Content-Type", "application/octet-stream"), ("Cache-Control", "max-age=600"), ("ETag", tag()),
            ]
            guard let piece = rangedPiece(of: body, for: request.header("Range")) else {
                return TestOrigin.Response(headers: headers, body: body)
            }
            return TestOrigin.Response(
                status: 206, headers: headers + [("Content-Range", piece.contentRange)],
                body: body.subdata(in: piece.range))
        }
    }

    @Test(
        "a 206 is stored as a part; ranges within it are hits; a range past it goes to the origin as sent, and the parts combine"
    )
    func storedAndCombined() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            Self.routeRanged(h.origin)
            let first = try await h.get("/data.bin", ["Range: bytes=0-99"])
            #expect(first.head.status.code == 206 && first.body == Self.body.subdata(in: 0..<100))
            await h.cache.waitForBackgroundWork()
            let inside = try await h.get("/data.bin", ["Range: bytes=10-19"])
            #expect(inside.isFromCache && inside.head.status.code == 206)
            #expect(inside.head.headerFields[.contentRange] == "bytes 10-19/200000")
            #expect(byteDifference(inside.body, Self.body.subdata(in: 10..<20)) == nil)
            #expect(h.origin.count("/data.bin") == 1)

            let next = try await h.get("/data.bin", ["Range: bytes=100-199"])
            #expect(!next.isFromCache && next.body == Self.body.subdata(in: 100..<200))
            #expect(h.origin.requests(to: "/data.bin").last?.header("Range") == "bytes=100-199")
            await h.cache.waitForBackgroundWork()
            let across = try await h.get("/data.bin", ["Range: bytes=50-149"])
            #expect(across.isFromCache, "the two parts were stored as one, 0-199")
            #expect(byteDifference(across.body, Self.body.subdata(in: 50..<150)) == nil)
            let both = try await h.get("/data.bin", ["Range: bytes=0-9,190-199"])
            #expect(both.isFromCache && both.head.headerFields[.contentType]?.hasPrefix("multipart/byteranges") == true)
            #expect(h.origin.count("/data.bin") == 2)
        }
    }

    @Test(
        "a full GET of a stored prefix asks the origin for the rest only (with If-Range), answers 200 whole, and stores it whole"
    )
    func prefixCompleted() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            Self.routeRanged(h.origin)
            _ = try await h.get("/data.bin", ["Range: bytes=0-999"])
            await h.cache.waitForBackgroundWork()
            let whole = try await h.get("/data.bin")
            #expect(whole.head.status.code == 200)
            #expect(byteDifference(whole.body, Self.body) == nil)
            #expect(
                whole.head.headerFields[.contentRange] == nil && whole.head.headerFields[.contentLength] == "200000")
            #expect(whole.cacheStatus.forward == .partial)
            let asked = h.origin.requests(to: "/data.bin").last
            #expect(asked?.header("Range") == "bytes=1000-")
            #expect(asked?.header("If-Range") == "\"d1\"")
            await h.cache.waitForBackgroundWork()
            let again = try await h.get("/data.bin")
            #expect(again.isFromCache)
            #expect(again.head.status.code == 200)
            #expect(byteDifference(again.body, Self.body) == nil)
            #expect(h.origin.count("/data.bin") == 2)
        }
    }

    @Test("completing a prefix from an origin that now ignores Range: its whole 200 is the answer, and is stored")
    func completionAnsweredWhole() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            let honoursRange = NIOLockedValueBox(true)
            h.origin.route("/switch.bin") { request in
                let headers = [("Cache-Control", "max-age=600"), ("ETag", "\"w1\"")]
                guard honoursRange.withLockedValue({ $0 }),
                    let piece = rangedPiece(of: Self.body, for: request.header("Range"))
                else {
                    return TestOrigin.Response(headers: headers, body: Self.body)
                }
                return TestOrigin.Response(
                    status: 206, headers: headers + [("Content-Range", piece.contentRange)],
                    body: Self.body.subdata(in: piece.range))
            }
            _ = try await h.get("/switch.bin", ["Range: bytes=0-999"])
            await h.cache.waitForBackgroundWork()
            honoursRange.withLockedValue { $0 = false }
            let whole = try await h.get("/switch.bin")
            #expect(whole.head.status.code == 200)
            #expect(byteDifference(whole.body, Self.body) == nil)
            #expect(h.origin.requests(to: "/switch.bin").last?.header("Range") == "bytes=1000-")
            await h.cache.waitForBackgroundWork()
            let again = try await h.get("/switch.bin")
            #expect(again.isFromCache)
            #expect(byteDifference(again.body, Self.body) == nil)
            #expect(h.origin.count("/switch.bin") == 2)
        }
    }

    @Test("a prefix without a strong ETag is not completed: the full GET fetches the whole, which replaces it")
    func prefixWithoutTagFetchedWhole() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            h.origin.route("/plain.bin") { request in
                let headers = [("Cache-Control", "max-age=600")]
                guard let piece = rangedPiece(of: Self.body, for: request.header("Range")) else {
                    return TestOrigin.Response(headers: headers, body: Self.body)
                }
                return TestOrigin.Response(
                    status: 206, headers: headers + [("Content-Range", piece.contentRange)],
                    body: Self.body.subdata(in: piece.range))
            }
            _ = try await h.get("/plain.bin", ["Range: bytes=0-999"])
            await h.cache.waitForBackgroundWork()
            let whole = try await h.get("/plain.bin")
            #expect(whole.head.status.code == 200)
            #expect(byteDifference(whole.body, Self.body) == nil)
            #expect(h.origin.requests(to: "/plain.bin").last?.header("Range") == nil)
            await h.cache.waitForBackgroundWork()
            let later = try await h.get("/plain.bin", ["Range: bytes=5000-5009"])
            #expect(later.isFromCache && later.body == Self.body.subdata(in: 5000..<5010))
        }
    }

    @Test(
        "a part whose Content-Range disagrees with its body is not stored (the conformance suite's 4-9/10 over five bytes)"
    )
    func inconsistentPartNotStored() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            h.origin.route("/odd") { _ in
                TestOrigin.Response(
                    status: 206, headers: [("Cache-Control", "max-age=600"), ("Content-Range", "bytes 4-9/10")],
                    body: Data("01234".utf8))
            }
            _ = try? await h.get("/odd", ["Range: bytes=-5"])
            await h.cache.waitForBackgroundWork()
            _ = try? await h.get("/odd", ["Range: bytes=-5"])
            #expect(h.origin.count("/odd") == 2)
        }
    }

    @Test("a part with another ETag replaces the stored part instead of combining with it")
    func otherTagReplaces() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            let tag = NIOLockedValueBox("\"v1\"")
            Self.routeRanged(h.origin) { tag.withLockedValue { $0 } }
            _ = try await h.get("/data.bin", ["Range: bytes=0-99"])
            await h.cache.waitForBackgroundWork()
            tag.withLockedValue { $0 = "\"v2\"" }
            _ = try await h.get("/data.bin", ["Range: bytes=100-199"])
            await h.cache.waitForBackgroundWork()
            let tail = try await h.get("/data.bin", ["Range: bytes=150-159"])
            #expect(tail.isFromCache && tail.head.headerFields[.eTag] == "\"v2\"")
            let head = try await h.get("/data.bin", ["Range: bytes=0-9"])
            #expect(!head.isFromCache, "the v1 part was replaced, not combined")
            #expect(h.origin.count("/data.bin") == 3)
        }
    }

    @Test(
        "a 200 cut short is kept as the part that arrived, never served as complete, and completed by the next full GET"
    )
    func cutOffKept() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            let calls = NIOLockedValueBox(0)
            h.origin.route("/cut.bin") { request in
                let headers = [("Cache-Control", "max-age=600"), ("ETag", "\"c1\"")]
                let call = calls.withLockedValue {
                    $0 += 1
                    return $0
                }
                if call == 1 {
                    var response = TestOrigin.Response(
                        headers: headers + [("Content-Length", "200000")], body: Self.body)
                    response.cutAfter = 50_000
                    return response
                }
                guard let piece = rangedPiece(of: Self.body, for: request.header("Range")) else {
                    return TestOrigin.Response(headers: headers, body: Self.body)
                }
                return TestOrigin.Response(
                    status: 206, headers: headers + [("Content-Range", piece.contentRange)],
                    body: Self.body.subdata(in: piece.range))
            }
            await #expect(throws: (any Error).self) { _ = try await h.get("/cut.bin") }
            await h.cache.waitForBackgroundWork()
            let inside = try await h.get("/cut.bin", ["Range: bytes=0-99"])
            #expect(
                inside.isFromCache && inside.body == Self.body.subdata(in: 0..<100),
                "the first 100 bytes arrived and were kept")
            let whole = try await h.get("/cut.bin")
            #expect(whole.head.status.code == 200)
            #expect(byteDifference(whole.body, Self.body) == nil)
            let rest = try #require(h.origin.requests(to: "/cut.bin").last?.header("Range"))
            let start = try #require(Int(rest.dropFirst("bytes=".count).dropLast()))
            #expect(start > 0 && start <= 50_000, "asked only for what did not arrive: \(rest)")
            #expect(h.origin.count("/cut.bin") == 2)
        }
    }

    @Test("a range of a body still arriving follows the download; one far past what has arrived gets its own request")
    func rangeOfArrivingBody() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            let big = Fixtures.patternedBytes(3_000_000)
            h.origin.route("/slow.bin") { request in
                let headers = [("Cache-Control", "max-age=600"), ("ETag", "\"s1\"")]
                if let piece = rangedPiece(of: big, for: request.header("Range")) {
                    return TestOrigin.Response(
                        status: 206, headers: headers + [("Content-Range", piece.contentRange)],
                        body: big.subdata(in: piece.range))
                }
                var response = TestOrigin.Response(headers: headers, body: big)
                response.pauseAfter = 100_000
                response.pause = .seconds(2)
                return response
            }
            let url = h.origin.url("/slow.bin").absoluteString
            let whole = try await h.cache.streamingResponse(for: Fixtures.request(.get, url))
            #expect(whole.head.status.code == 200)
            let near = try await h.get("/slow.bin", ["Range: bytes=1000-1999"])
            #expect(near.head.status.code == 206 && near.body == big.subdata(in: 1000..<2000))
            #expect(near.head.headerFields[.contentRange] == "bytes 1000-1999/3000000")
            #expect(near.cacheStatus.collapsed, "answered from the download under way")
            // While the download pauses at 100,000 bytes: a range far past them gets its own request.
            let far = try await h.get("/slow.bin", ["Range: bytes=2900000-"])
            #expect(far.head.status.code == 206 && far.body == big.subdata(in: 2_900_000..<3_000_000))
            #expect(h.origin.count("/slow.bin") == 2, "one request for the whole, one for the range far past it")
            #expect(h.origin.requests(to: "/slow.bin").last?.header("Range") == "bytes=2900000-")
            let following = try await h.get("/slow.bin", ["Range: bytes=500000-500099"])
            #expect(
                byteDifference(following.body, big.subdata(in: 500_000..<500_100)) == nil,
                "within reach: it waited for the bytes")
            #expect(h.origin.count("/slow.bin") == 2)
            var collected = Data()
            for try await chunk in whole.body { collected.append(chunk) }
            #expect(collected == big)
        }
    }

    @Test("offline, a range within a stored part is served; the whole is not, and no byte of it is made up")
    func offlinePart() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            Self.routeRanged(h.origin)
            _ = try await h.get("/data.bin", ["Range: bytes=0-99"])
            await h.cache.waitForBackgroundWork()
            try await h.origin.stop()
            let inside = try await h.get("/data.bin", ["Range: bytes=20-29"])
            #expect(inside.isFromCache && inside.body == Self.body.subdata(in: 20..<30))
            await #expect(throws: CacheError.self) { _ = try await h.get("/data.bin") }
            let onlyCached = try await h.get("/data.bin", ["Cache-Control: only-if-cached"])
            #expect(onlyCached.head.status.code == 504)
        }
    }

    /// Asks for `/big.bin` with `fields`, then reads the answer only once the entry it makes is
    /// stored (the tail of `/big.bin` is a hit): chunks larger than BodyBroadcast's 256 KiB
    /// budget have been let go to the store's file by then, and are read back from it.
    static func readLate(_ h: EngineHarness, _ fields: [String]) async throws -> StreamingCacheResponse {
        let response = try await h.cache.streamingResponse(
            for: Fixtures.request(.get, h.origin.url("/big.bin").absoluteString, fields))
        var stored = false
        for _ in 0..<250 where !stored {
            let tail = try await h.get("/big.bin", ["Range: bytes=2999000-2999999", "Cache-Control: only-if-cached"])
            stored = tail.isFromCache
            if !stored { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(stored, "the entry was stored within 5 s")
        return response
    }

    @Test(
        "a completed prefix larger than the memory budget, read after the rest has arrived: the client gets the prefix and then the rest, byte for byte"
    )
    func completedPrefixReadLate() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            Self.routeBig(h.origin)
            _ = try await h.get("/big.bin", ["Range: bytes=0-999999"])
            await h.cache.waitForBackgroundWork()
            let response = try await Self.readLate(h, [])
            #expect(response.head.status.code == 200 && response.cacheStatus.forward == .partial)
            let received = try await response.body.collect()
            #expect(received.count == Self.bigBody.count)
            #expect(byteDifference(received, Self.bigBody) == nil)
        }
    }

    @Test(
        "a range that combines with a stored part before it, read after it is stored: the client gets its own range, byte for byte"
    )
    func combinedRangeReadLate() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            Self.routeBig(h.origin)
            _ = try await h.get("/big.bin", ["Range: bytes=0-999999"])
            await h.cache.waitForBackgroundWork()
            let response = try await Self.readLate(h, ["Range: bytes=1000000-"])
            #expect(response.head.status.code == 206)
            let received = try await response.body.collect()
            #expect(byteDifference(received, Self.bigBody.subdata(in: 1_000_000..<3_000_000)) == nil)
        }
    }

    /// `/big.bin`: ``bigBody``, ranges answered one at a time.
    static func routeBig(_ origin: TestOrigin) {
        routeRanged(origin, path: "/big.bin", body: bigBody)
    }

    static let bigBody = Fixtures.bytes(3_000_000) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 12) }

    @Test(
        "in a process that has not read the stored part yet, a range just past it combines with it, copied from its file byte for byte"
    )
    func combinedFromUncheckedFile() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            Self.routeBig(h.origin)
            _ = try await h.get("/big.bin", ["Range: bytes=0-1499999"])
            try await h.withAnotherCache(after: ["/big.bin"]) { other in
                let url = h.origin.url("/big.bin").absoluteString
                let next = try await other.response(for: Fixtures.request(.get, url, ["Range: bytes=1500000-1599999"]))
                #expect(!next.isFromCache)
                #expect(byteDifference(next.body, Self.bigBody.subdata(in: 1_500_000..<1_600_000)) == nil)
                await other.waitForBackgroundWork()
                let across = try await other.response(
                    for: Fixtures.request(.get, url, ["Range: bytes=1400000-1549999", "Cache-Control: only-if-cached"]))
                #expect(across.isFromCache, "the two parts were stored as one, 0-1599999")
                #expect(byteDifference(across.body, Self.bigBody.subdata(in: 1_400_000..<1_550_000)) == nil)
                let first = try await other.response(
                    for: Fixtures.request(.get, url, ["Range: bytes=0-99999", "Cache-Control: only-if-cached"]))
                #expect(byteDifference(first.body, Self.bigBody.subdata(in: 0..<100_000)) == nil)
            }
            #expect(h.origin.count("/big.bin") == 2)
        }
    }

    @Test("a stored part found corrupt when a range past it arrives: the range is answered, and stored alone")
    func corruptNeighbour() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            Self.routeBig(h.origin)
            _ = try await h.get("/big.bin", ["Range: bytes=0-1499999"])
            await h.cache.waitForBackgroundWork()
            try h.corruptBodyFile(at: 700_000)
            try await h.withAnotherCache(after: ["/big.bin"]) { other in
                let url = h.origin.url("/big.bin").absoluteString
                let next = try await other.response(for: Fixtures.request(.get, url, ["Range: bytes=1500000-1599999"]))
                #expect(next.head.status.code == 206)
                #expect(byteDifference(next.body, Self.bigBody.subdata(in: 1_500_000..<1_600_000)) == nil)
                await other.waitForBackgroundWork()
                #expect(other.counters.storeProblems >= 1)
                let stored = try await other.response(
                    for: Fixtures.request(.get, url, ["Range: bytes=1550000-1559999", "Cache-Control: only-if-cached"]))
                #expect(stored.isFromCache)
                #expect(byteDifference(stored.body, Self.bigBody.subdata(in: 1_550_000..<1_560_000)) == nil)
                let gone = try await other.response(
                    for: Fixtures.request(.get, url, ["Range: bytes=0-99", "Cache-Control: only-if-cached"]))
                #expect(gone.head.status.code == 504, "no byte of the corrupt part is served")
            }
        }
    }
}
