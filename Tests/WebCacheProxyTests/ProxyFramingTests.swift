import AsyncHTTPClient
import Dispatch
import Foundation
import HTTPCaching
import NIOCore
import NIOPosix
import Testing
import WebCacheTestSupport

@Suite("The caching proxy: message framing and pipelining", .serialized)
struct ProxyFramingTests {
    @Test(
        "pipelined requests are answered in order: a miss, then those queued behind it from its fetch or the store; HEAD has no body"
    )
    func pipelining() async throws {
        try await TestOrigin.with { origin in
            origin.route("/page") { _ in
                var response = TestOrigin.Response.text("the page body", headers: [("Cache-Control", "max-age=600")])
                response.delay = .milliseconds(200)
                return response
            }
            try await ProxyTests.withProxy(origin) { port, _ in
                let request = "GET /page HTTP/1.1\r\nHost: test\r\n\r\n"
                let answer = try await RawHTTPClient.exchange(
                    port: port,
                    request + request + "HEAD /page HTTP/1.1\r\nHost: test\r\n\r\n"
                        + "GET /page HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                let heads = answer.components(separatedBy: "HTTP/1.1 200 OK\r\n").dropFirst()
                #expect(heads.count == 4, "\(answer)")
                let statuses = heads.map { $0.firstLine(containing: "Cache-Status") ?? "" }
                #expect(statuses.first?.contains("fwd=uri-miss") == true)
                // Behind the miss, a hit; or, for a request read before the miss's entry is
                // committed (its answer is over at its Content-Length, before the store has it), a
                // share of the miss's own fetch. Either way the origin sees one request.
                #expect(
                    statuses.dropFirst().allSatisfy { $0.contains("; hit;") || $0.hasSuffix("; collapsed") },
                    "\(statuses)")
                #expect(heads.map { $0.hasSuffix("the page body") } == [true, true, false, true])
                #expect(heads.allSatisfy { $0.contains("Content-Length: 13\r\n") })
                #expect(heads.last?.contains("Connection: close\r\n") == true)
                #expect(origin.count("/page") == 1)
            }
        }
    }

    @Test(
        "an unsafe request right behind a miss invalidates what that miss stores, even when the entry reaches the index after the request: on the same connection and on another (RFC 9111 §4.4)"
    )
    func invalidationBehindAMiss() async throws {
        try await TestOrigin.with { origin in
            let versions = Locked([String: Int]())
            let postArrived = DispatchSemaphore(value: 0)
            for path in ["/same", "/other"] {
                origin.route(path) { request in
                    let version = versions.withLock { versions in
                        if request.method == "POST" { versions[path, default: 1] += 1 }
                        return versions[path, default: 1]
                    }
                    if request.method == "POST" { postArrived.signal() }
                    return .text("v\(version)", headers: [("Cache-Control", "max-age=600")])
                }
            }
            // Each path's first entry is held on its way into the index until its POST has reached
            // the origin, and a little longer: the POST's answer, and its invalidation, come
            // meanwhile.
            let held = Locked(Set<String>())
            let hold: @Sendable ([String]) -> Void = { urls in
                guard !held.withLock({ held in urls.filter { held.insert($0).inserted } }).isEmpty else { return }
                _ = postArrived.wait(timeout: .now() + .seconds(2))
                usleep(50_000)
            }
            try await ProxyTests.withProxy(origin, adjust: { $0.store.beforeWritingRows = hold }) { port, _ in
                func bodies(_ answer: String) -> [String] {
                    answer.components(separatedBy: "HTTP/1.1 200 OK\r\n").dropFirst().map {
                        $0.components(separatedBy: "\r\n\r\n").last ?? ""
                    }
                }
                // On one connection, in one write: the POST is read as soon as the miss's answer is over.
                let pipelined = try await RawHTTPClient.exchange(
                    port: port,
                    "GET /same HTTP/1.1\r\nHost: test\r\n\r\n"
                        + "POST /same HTTP/1.1\r\nHost: test\r\nContent-Length: 1\r\n\r\nx"
                        + "GET /same HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                #expect(bodies(pipelined) == ["v1", "v2", "v2"], "\(pipelined)")
                // On three connections, one after the other.
                var answers: [String] = []
                for request in [
                    "GET /other HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
                    "POST /other HTTP/1.1\r\nHost: test\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx",
                    "GET /other HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n",
                ] {
                    answers += bodies(try await RawHTTPClient.exchange(port: port, request))
                }
                #expect(answers == ["v1", "v2", "v2"])
                #expect(origin.requests(to: "/other").map(\.method) == ["GET", "POST", "GET"])
            }
        }
    }

    @Test(
        "a request that comes once an answer is whole, while its entry is still on its way into the index, waits for the entry and is a hit (RFC 9211 §2.1)"
    )
    func hitBehindTheCommit() async throws {
        try await TestOrigin.with { origin in
            origin.route("/a") { _ in .text("whole", headers: [("Cache-Control", "max-age=600")]) }
            // The entry is held on its way into the index until the second request has been sent,
            // and a moment more: it comes while the first answer is whole and not yet stored.
            let secondSent = DispatchSemaphore(value: 0)
            let hold = Self.holdingFirst("/a", held: Locked(false)) {
                _ = secondSent.wait(timeout: .now() + .seconds(5))
                usleep(100_000)
            }
            try await ProxyTests.withProxy(origin, adjust: { $0.store.beforeWritingRows = hold }) { port, _ in
                let first = try await RawHTTPClient.exchange(
                    port: port, "GET /a HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                #expect(first.hasSuffix("whole") && first.contains("fwd=uri-miss"), "\(first)")
                let second = try RawHTTPClient.sendWithoutReading(
                    port: port, "GET /a HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                defer { RawHTTPClient.close(second) }
                secondSent.signal()
                let answer = await RawHTTPClient.receiveUntilClosed(second, timeout: 10) ?? ""
                #expect(answer.hasSuffix("whole"), "\(answer)")
                #expect(answer.firstLine(containing: "Cache-Status")?.contains("; hit") == true, "\(answer)")
                #expect(origin.count("/a") == 1)
            }
        }
    }

    @Test(
        "a request waiting for an entry on its way into the index leaves its event loop free: another connection's hit is answered meanwhile"
    )
    func waitingForTheIndexWithoutBlocking() async throws {
        try await TestOrigin.with { origin in
            for path in ["/a", "/b"] {
                origin.route(path) { _ in .text("body of \(path)", headers: [("Cache-Control", "max-age=600")]) }
            }
            // /a's entry is held on its way into the index until the test lets it go (or 5 s).
            let release = DispatchSemaphore(value: 0)
            let held = Locked(false)
            let hold = Self.holdingFirst("/a", held: held) { _ = release.wait(timeout: .now() + .seconds(5)) }
            // One event loop: a loop blocked by the wait would hold up every connection.
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            try await withCleanup({ try? await group.shutdownGracefully() }) {
                try await Self.whileAnEntryIsHeld(origin, hold: hold, release: release, held: held, group: group)
            }
        }
    }

    @Test(
        "an index writer that is stuck holds a request for its entry only so long: then the request goes to the origin"
    )
    func stuckWriter() async throws {
        try await TestOrigin.with { origin in
            origin.route("/a") { _ in .text("body of /a", headers: [("Cache-Control", "max-age=600")]) }
            let release = DispatchSemaphore(value: 0)
            let hold = Self.holdingFirst("/a", held: Locked(false)) { _ = release.wait(timeout: .now() + .seconds(20)) }
            defer { release.signal() }
            try await ProxyTests.withProxy(origin, adjust: { $0.store.beforeWritingRows = hold }) { port, _ in
                let request = "GET /a HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"
                #expect(try await RawHTTPClient.exchange(port: port, request).hasSuffix("body of /a"))
                let started = ContinuousClock.now
                let again = try await RawHTTPClient.exchange(port: port, request, timeout: 10)
                let waited = ContinuousClock.now - started
                #expect(again.hasSuffix("body of /a"), "\(again)")
                #expect(again.firstLine(containing: "Cache-Status")?.contains("fwd=uri-miss") == true, "\(again)")
                #expect(origin.count("/a") == 2)
                #expect(waited >= .seconds(1.5) && waited < .seconds(8), "waited \(waited)")
                release.signal()
            }
        }
    }

    /// A `beforeWritingRows` hook that runs `wait` on the index writer's thread before the first
    /// batch holding a URL that ends in `suffix`, holding that batch on its way in; `held` tells
    /// when it has.
    private static func holdingFirst(
        _ suffix: String, held: Locked<Bool>, _ wait: @escaping @Sendable () -> Void
    ) -> @Sendable ([String]) -> Void {
        { urls in
            guard urls.contains(where: { $0.hasSuffix(suffix) }),
                !held.withLock({ held in
                    defer { held = true }
                    return held
                })
            else { return }
            wait()
        }
    }

    /// The body of ``waitingForTheIndexWithoutBlocking()``, on a proxy whose connections share
    /// `group`'s one loop.
    private static func whileAnEntryIsHeld(
        _ origin: TestOrigin, hold: @escaping @Sendable ([String]) -> Void, release: DispatchSemaphore,
        held: Locked<Bool>, group: MultiThreadedEventLoopGroup
    ) async throws {
        try await ProxyTests.withProxy(origin, adjust: { $0.store.beforeWritingRows = hold }, group: group) {
            port, _ in
            func get(_ path: String) async throws -> String {
                try await RawHTTPClient.exchange(
                    port: port, "GET \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", timeout: 3)
            }
            _ = try await get("/b")
            #expect(try await get("/b").firstLine(containing: "Cache-Status")?.contains("; hit") == true)
            #expect(try await get("/a").hasSuffix("body of /a"))
            let waiting = try RawHTTPClient.sendWithoutReading(
                port: port, "GET /a HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
            defer { RawHTTPClient.close(waiting) }
            try await Task.sleep(for: .milliseconds(100))
            // /a's entry is still held: the hit of /b comes from the same loop all the same.
            let started = ContinuousClock.now
            let other = try await get("/b")
            #expect(other.hasSuffix("body of /b") && ContinuousClock.now - started < .seconds(2), "\(other)")
            #expect(held.withLock { $0 })
            release.signal()
            let answer = await RawHTTPClient.receiveUntilClosed(waiting, timeout: 10) ?? ""
            #expect(answer.hasSuffix("body of /a"), "\(answer)")
            #expect(answer.firstLine(containing: "Cache-Status")?.contains("; hit") == true, "\(answer)")
            #expect(origin.count("/a") == 1)
        }
    }

    @Test("a body the origin sends chunked streams chunked, and comes from the cache with its length")
    func chunkedBodies() async throws {
        try await TestOrigin.with { origin in
            let body = Fixtures.patternedBytes(300_000)
            origin.route("/chunked") { _ in
                var response = TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: body)
                response.chunked = true
                response.pauseAfter = 100_000
                response.pause = .milliseconds(100)
                return response
            }
            try await ProxyTests.withProxy(origin) { port, client in
                let first = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/chunked"), timeout: .seconds(10))
                #expect(first.headers.first(name: "Transfer-Encoding") == "chunked")
                #expect(first.headers.first(name: "Content-Length") == nil)
                let firstBody = try await first.body.collect(upTo: 1 << 20)
                #expect(byteDifference(firstBody.readableBytesView, body) == nil)
                let again = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/chunked"), timeout: .seconds(10))
                #expect(again.headers.first(name: "Content-Length") == "300000")
                #expect(again.headers.first(name: "Transfer-Encoding") == nil)
                let againBody = try await again.body.collect(upTo: 1 << 20)
                #expect(byteDifference(againBody.readableBytesView, body) == nil)
                #expect(origin.count("/chunked") == 1)
            }
        }
    }
    @Test("large stored bodies go out from their files; a file cut short since is never sent")
    func bodiesFromFiles() async throws {
        try await TestOrigin.with { origin in
            let body = Fixtures.patternedBytes(200_000, seed: 1)
            origin.route("/large") { _ in TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: body) }
            try await TemporaryDirectory.with { directory in
                try await ProxyTests.withProxy(origin, cacheDirectory: directory) { port, client in
                    let url = "http://127.0.0.1:\(port)/large"
                    for round in 0..<3 {  // miss, hit read and verified, hit sent from the file
                        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                        #expect(response.headers.first(name: "Content-Length") == "200000")
                        let received = try await response.body.collect(upTo: 1 << 20)
                        #expect(byteDifference(received.readableBytesView, body) == nil, "round \(round)")
                    }
                    var head = HTTPClientRequest(url: url)
                    head.method = .HEAD
                    let headResponse = try await client.execute(head, timeout: .seconds(10))
                    #expect(headResponse.headers.first(name: "Content-Length") == "200000")
                    #expect(try await headResponse.body.collect(upTo: 1 << 20).readableBytes == 0)
                    #expect(origin.count("/large") == 1)

                    let file = try #require(bodyFiles(in: directory).first)
                    let handle = try FileHandle(forWritingTo: file)
                    try handle.truncate(atOffset: 1_000)
                    try handle.close()
                    let afterDamage = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(10))
                    let received = try await afterDamage.body.collect(upTo: 1 << 20)
                    // From the verified copy in memory, or fetched again: never the short file.
                    #expect(byteDifference(received.readableBytesView, body) == nil)
                }
            }
        }
    }
    @Test("in reverse mode an absolute-form target goes to the upstream, never to the host it names")
    func absoluteFormInReverseMode() async throws {
        try await TestOrigin.with { origin in
            origin.route("/page") { request in
                .text("upstream page \(request.target)", headers: [("Cache-Control", "max-age=600")])
            }
            try await ProxyTests.withProxy(origin) { port, _ in
                let answer = try await RawHTTPClient.exchange(
                    port: port,
                    "GET http://elsewhere.invalid/page?x=1 HTTP/1.1\r\nHost: elsewhere.invalid\r\nConnection: close\r\n\r\n"
                )
                #expect(answer.hasPrefix("HTTP/1.1 200 OK"))
                #expect(answer.hasSuffix("upstream page /page?x=1"))
                #expect(origin.count("/page") == 1)
            }
        }
    }
    @Test("an HTTP/1.0 client that asks for keep-alive is told so; one that does not is closed")
    func http10KeepAlive() async throws {
        try await TestOrigin.with { origin in
            origin.route("/page") { _ in .text("old client", headers: [("Cache-Control", "max-age=600")]) }
            try await ProxyTests.withProxy(origin) { port, _ in
                let answer = try await RawHTTPClient.exchange(
                    port: port, "GET /page HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /page HTTP/1.0\r\n\r\n")
                let heads = answer.components(separatedBy: "HTTP/1.1 200 OK\r\n").dropFirst()
                #expect(heads.count == 2, "\(answer)")
                #expect(heads.first?.contains("Connection: keep-alive\r\n") == true)
                #expect(heads.last?.contains("Connection: close\r\n") == true)
            }
        }
    }
}

extension String {
    /// The first line that contains `text`.
    func firstLine(containing text: String) -> String? {
        split(separator: "\r\n").first { $0.contains(text) }.map(String.init)
    }

    @Test(
        "a whole answer larger than the socket takes at once, to a client that sends Connection: close, arrives whole before the connection closes (a revalidation's new 200)"
    )
    func wholeAnswerBeforeClose() async throws {
        try await TestOrigin.with { origin in
            let version = Locked(0)
            let body = String(repeating: "0123456789", count: 300_000) + "END"
            origin.route("/changing") { _ in
                let tag = version.withLock { value -> Int in
                    value += 1
                    return value
                }
                return .text(body, headers: [("Cache-Control", "no-cache"), ("ETag", "\"v\(tag)\"")])
            }
            try await ProxyTests.withProxy(origin) { port, _ in
                for expected in ["fwd=uri-miss", "fwd=stale", "fwd=stale"] {
                    let answer = try await RawHTTPClient.exchange(
                        port: port, "GET /changing HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
                    // Not the answer itself in a failure's message: it is 3 MB.
                    let status = answer.firstLine(containing: "Cache-Status") ?? ""
                    let whole = answer.hasSuffix(body)
                    #expect(status.contains(expected), "\(status)")
                    #expect(whole, "\(answer.utf8.count) bytes, ending \(answer.suffix(20))")
                }
                #expect(origin.count("/changing") == 3)
            }
        }
    }

    @Test(
        "an HTTP/1.0 client gets a body the origin sent chunked without chunked framing, until the close; HEAD of the stored response gives its length"
    )
    func unknownLengthToHTTP10() async throws {
        try await TestOrigin.with { origin in
            let body = String(repeating: "abcdefghij", count: 30_000) + "END"
            for path in ["/chunked", "/also-chunked"] {
                origin.route(path) { _ in
                    var response = TestOrigin.Response.text(body, headers: [("Cache-Control", "max-age=600")])
                    response.chunked = true
                    return response
                }
            }
            try await ProxyTests.withProxy(origin) { port, _ in
                // Misses: the body's length is not known when its head goes out; the connection
                // closes after it even when the client asked to keep it.
                for request in [
                    "GET /chunked HTTP/1.0\r\nHost: test\r\n\r\n",
                    "GET /also-chunked HTTP/1.0\r\nHost: test\r\nConnection: keep-alive\r\n\r\n",
                ] {
                    let answer = try await RawHTTPClient.exchange(port: port, request)
                    let head = answer.components(separatedBy: "\r\n\r\n").first ?? ""
                    let whole = answer.hasSuffix("\r\n\r\n" + body)
                    #expect(whole, "\(answer.utf8.count) bytes: \(head)")
                    #expect(!head.contains("Transfer-Encoding"), "\(head)")
                    #expect(head.contains("Connection: close"), "\(head)")
                }
                for version in ["1.0", "1.1"] {
                    let answer = try await RawHTTPClient.exchange(
                        port: port, "HEAD /chunked HTTP/\(version)\r\nHost: test\r\nConnection: close\r\n\r\n")
                    #expect(answer.contains("Content-Length: \(body.utf8.count)\r\n"), "\(answer)")
                    #expect(answer.contains("; hit"), "\(answer)")
                }
            }
        }
    }

    @Test(
        "a body delimited by the close that the origin cuts short ends in a reset, so its HTTP/1.0 client sees the cut"
    )
    func cutUntilCloseIsReset() async throws {
        try await TestOrigin.with { origin in
            let body = Data(repeating: UInt8(ascii: "x"), count: 300_000)
            for (path, cut) in [("/whole", nil), ("/cut", 100_000)] as [(String, Int?)] {
                origin.route(path) { _ in
                    var response = TestOrigin.Response(headers: [("Cache-Control", "no-store")], body: body)
                    response.chunked = true
                    response.cutAfter = cut
                    return response
                }
            }
            try await ProxyTests.withProxy(origin) { port, _ in
                let whole = try await RawHTTPClient.exchangeNotingReset(
                    port: port, "GET /whole HTTP/1.0\r\nHost: test\r\n\r\n")
                let wholeBody = whole.answer.hasSuffix("\r\n\r\n" + String(repeating: "x", count: 300_000))
                #expect(!whole.reset && wholeBody)
                let cut = try await RawHTTPClient.exchangeNotingReset(
                    port: port, "GET /cut HTTP/1.0\r\nHost: test\r\n\r\n")
                #expect(cut.reset, "\(cut.answer.utf8.count) bytes, then a plain close")
            }
        }
    }
}
