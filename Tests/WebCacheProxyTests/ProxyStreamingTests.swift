import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import WebCacheTestSupport

@Suite("The caching proxy: streaming, tunnels, coalescing", .serialized)
struct ProxyStreamingTests {
    @Test("a large response reaches the client before the origin has sent it all, and is then served from the cache")
    func streamsLargeBodies() async throws {
        try await TestOrigin.with { origin in
            let body = Fixtures.patternedBytes(2 << 20)
            let rest = OriginGate()
            origin.route("/big") { _ in
                var response = TestOrigin.Response(
                    headers: [("Cache-Control", "max-age=600"), ("Content-Type", "application/octet-stream")],
                    body: body)
                response.pauseAfter = 256 << 10
                response.pauseUntil = rest
                return response
            }
            try await ProxyTests.withProxy(origin) { port, client in
                let response = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/big"), timeout: .seconds(20))
                var received = Data()
                for try await chunk in response.body {
                    // The origin holds the rest back until the client has some of the body:
                    // a proxy that waited for the whole body would never get here.
                    if received.isEmpty { rest.open() }
                    received.append(contentsOf: chunk.readableBytesView)
                }
                #expect(byteDifference(received, body) == nil)
                let again = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/big"), timeout: .seconds(10))
                #expect(again.headers.first(name: "Cache-Status")?.hasPrefix("WebCache; hit") == true)
                let bytes = try await again.body.collect(upTo: 4 << 20)
                #expect(byteDifference(bytes.readableBytesView, body) == nil)
                #expect(origin.count("/big") == 1)
            }
        }
    }

    @Test("a client that goes away during a body the cache does not keep: the origin connection is closed, not drained")
    func clientGoneClosesOrigin() async throws {
        try await TestOrigin.with { origin in
            let rest = OriginGate()
            origin.route("/download") { _ in
                var response = TestOrigin.Response(
                    headers: [("Cache-Control", "no-store")], body: Fixtures.patternedBytes(2 << 20))
                response.pauseAfter = 300_000
                response.pauseUntil = rest
                return response
            }
            try await ProxyTests.withProxy(origin) { port, client in
                let response = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/download"), timeout: .seconds(10))
                for try await _ in response.body { break }  // the first bytes, then the client goes
                // Within half the origin client's time limit (3 s), which would close it anyway.
                let open = try await origin.connectionsOpen(afterWaitingAtMost: .milliseconds(1500))
                rest.open()
                #expect(open == 0, "the proxy went on reading a body nobody would read")
            }
        }
    }

    /// A storable download with no length, larger than the store's largest entry (256 KiB in
    /// these tests), at `/download`: its first 600,000 bytes at once and the rest once `rest`
    /// opens.
    static func routeUnstorableDownload(_ body: Data, _ origin: TestOrigin, rest: OriginGate) {
        origin.route("/download") { _ in
            var response = TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: body)
            response.chunked = true
            response.pauseAfter = 600_000
            response.pauseUntil = rest
            return response
        }
    }

    /// Runs `test` with a proxy whose store keeps at most 256 KiB an entry, in front of an origin
    /// serving a 3 MiB body as such a download (given to `test` with the gate to its rest).
    static func withUnstorableDownload(
        _ test: (TestOrigin, _ port: Int, HTTPClient, _ body: Data, _ rest: OriginGate) async throws -> Void
    ) async throws {
        try await TestOrigin.with { origin in
            let body = Fixtures.patternedBytes(3 << 20)
            let rest = OriginGate()
            Self.routeUnstorableDownload(body, origin, rest: rest)
            try await ProxyTests.withProxy(origin, adjust: { $0.store.maximumEntrySize = 256 << 10 }) { port, client in
                try await test(origin, port, client, body, rest)
            }
        }
    }

    @Test(
        "a download the store gives up on half-way is its client's alone from there: whole for a slow client; a request meanwhile makes its own"
    )
    func storingStoppedDownload() async throws {
        try await Self.withUnstorableDownload { origin, port, client, body, rest in
            let slow = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/download"), timeout: .seconds(20))
            var received = Data()
            for try await chunk in slow.body {
                if received.isEmpty { rest.open() }
                received.append(contentsOf: chunk.readableBytesView)
                if received.count < 1 << 20 { try await Task.sleep(for: .milliseconds(2)) }
            }
            #expect(byteDifference(received, body) == nil)
            // A request while the body is read once makes its own fetch, and gets it whole.
            let gate = OriginGate()
            Self.routeUnstorableDownload(body, origin, rest: gate)
            let first = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/download"), timeout: .seconds(20))
            var iterator = first.body.makeAsyncIterator()
            var firstBytes = 0
            // All that comes before the gate (600,000 bytes), past the store's 256 KiB: the proxy
            // has given up storing it, so the next request may no longer join it. (One sent
            // before that would join it, as a body still being stored is shared.)
            while firstBytes < 600_000, let chunk = try await iterator.next() { firstBytes += chunk.readableBytes }
            await gate.arrivals(1)
            let second = Task {
                let response = try await client.execute(
                    HTTPClientRequest(url: "http://127.0.0.1:\(port)/download"), timeout: .seconds(20))
                return try await response.body.collect(upTo: 8 << 20)
            }
            try await Task.sleep(for: .milliseconds(100))
            gate.open()
            while let chunk = try await iterator.next() { firstBytes += chunk.readableBytes }
            #expect(firstBytes == body.count)
            #expect(byteDifference(try await second.value.readableBytesView, body) == nil)
            #expect(origin.count("/download") == 3)
        }
    }

    @Test("a client that goes away during a download the store gave up on: the origin connection is closed")
    func storingStoppedClientGone() async throws {
        try await Self.withUnstorableDownload { origin, port, client, _, held in
            let leaving = try await client.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/download"), timeout: .seconds(10))
            for try await _ in leaving.body { break }
            let open = try await origin.connectionsOpen(afterWaitingAtMost: .milliseconds(1500))
            held.open()
            #expect(open == 0, "the proxy went on reading a body nobody would read or store")
        }
    }

    @Test("concurrent requests for one URL make one origin request")
    func coalesces() async throws {
        try await TestOrigin.with { origin in
            origin.route("/slow") { _ in
                var response = TestOrigin.Response.text("slow page", headers: [("Cache-Control", "max-age=600")])
                response.delay = .milliseconds(300)
                return response
            }
            try await ProxyTests.withProxy(origin) { port, client in
                let bodies = try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<20 {
                        group.addTask { try await ProxyTests.get(client, "http://127.0.0.1:\(port)/slow").1 }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(bodies.count == 20 && bodies.allSatisfy { $0 == "slow page" })
                #expect(origin.count("/slow") == 1)
            }
        }
    }

    @Test("forward mode tunnels CONNECT byte for byte to allowed destinations only; reverse mode refuses it")
    func tunnels() async throws {
        try await TestOrigin.with { origin in
            origin.route("/secret") { _ in .text("through the tunnel", headers: [("Cache-Control", "max-age=600")]) }
            let inner = "GET /secret HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            try await ProxyTests.withProxy(origin, reverse: false, allowed: ["127.0.0.1"]) { port, _ in
                let connect = "CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: 127.0.0.1:\(origin.port)\r\n\r\n"
                let answer = try await RawHTTPClient.exchange(port: port, connect + inner)
                #expect(answer.hasPrefix("HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.1 200 OK"))
                #expect(answer.hasSuffix("through the tunnel"))
                #expect(!answer.contains("Cache-Status"), "tunnelled bytes are not cached or changed")
                // A client that half-closes right after its bytes is not held: either the tunnel was up
                // in time and the answer comes back, or the connection is closed at once.
                let start = ContinuousClock.now
                let halfClosed = try await RawHTTPClient.exchange(
                    port: port, connect + "GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
                    halfClose: true)
                #expect(ContinuousClock.now - start < .seconds(5))
                #expect(halfClosed.isEmpty || halfClosed.hasPrefix("HTTP/1.1 200 Connection Established"))
                let elsewhere =
                    "CONNECT localhost:\(origin.port) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                let answer1 = try await RawHTTPClient.exchange(port: port, elsewhere)
                #expect(answer1.hasPrefix("HTTP/1.1 403"))
                let closedPort = "CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                let answer2 = try await RawHTTPClient.exchange(port: port, closedPort)
                #expect(answer2.hasPrefix("HTTP/1.1 502"))
                let noPort = "CONNECT 127.0.0.1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                let answer3 = try await RawHTTPClient.exchange(port: port, noPort)
                #expect(answer3.hasPrefix("HTTP/1.1 400"))
            }
            #expect(origin.count("/secret") == 1)
            try await ProxyTests.withProxy(origin) { port, _ in
                let connect =
                    "CONNECT 127.0.0.1:\(origin.port) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
                let answer4 = try await RawHTTPClient.exchange(port: port, connect)
                #expect(answer4.hasPrefix("HTTP/1.1 405"))
            }
        }
    }
}

extension ProxyStreamingTests {
    @Test(
        "a client that resets its connection while the answer waits for the origin's next bytes: the origin connection is closed at once"
    )
    func clientResetWhileOriginSilent() async throws {
        try await TestOrigin.with { origin in
            let rest = origin.routeHeldBody(
                "/poll", Fixtures.patternedBytes(64 << 10), sendingFirst: 8 << 10, cacheControl: "no-store",
                chunked: true)
            try await ProxyTests.withProxy(origin) { port, _ in
                let connection = try RawHTTPClient.sendWithoutReading(
                    port: port, "GET /poll HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                await rest.arrivals(1)
                try await Task.sleep(for: .milliseconds(200))  // the first bytes reach the client
                // Unread bytes make the close a reset: the proxy learns at once that its client is
                // gone, while the origin sends nothing it could fail to write.
                RawHTTPClient.close(connection)
                let open = try await origin.connectionsOpen(afterWaitingAtMost: .milliseconds(1500))
                rest.open()
                #expect(open == 0, "the proxy held the origin connection of a client that left")
            }
        }
    }
}
