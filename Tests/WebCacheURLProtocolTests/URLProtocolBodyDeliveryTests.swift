import Foundation
import HTTPCaching
import Testing
import WebCache
import WebCacheTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// In the URLSession suite: `WebCacheURLProtocol` is installed process-wide, so every test that
/// installs it runs in this one serialized suite.
extension URLProtocolTests {
    /// What a data task's delegate has been told.
    final class Received: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        private let state = Locked((bytes: Data(), finished: false, error: (any Error)?.none))

        var bytes: Data { state.withLock { $0.bytes } }
        var finished: Bool { state.withLock { $0.finished } }
        var error: (any Error)? { state.withLock { $0.error } }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            state.withLock { $0.bytes.append(data) }
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            state.withLock {
                $0.finished = true
                $0.error = error
            }
        }

        /// Waits (on the wall clock, at most `limit`) until `condition` holds; returns whether it did.
        /// The delegate hears the session on an operation queue that shares Dispatch's threads with
        /// Swift's: in a loaded full run (twice in about 60, both under a sanitizer or a build beside
        /// it) the first bytes were not heard within 10 s.
        func wait(upTo limit: Duration = .seconds(30), until condition: (Received) -> Bool) async -> Bool {
            let deadline = ContinuousClock.now + limit
            while !condition(self) {
                if ContinuousClock.now >= deadline { return false }
                try? await Task.sleep(for: .milliseconds(5))
            }
            return true
        }
    }

    /// A data task for `url` whose delegate hears the body as the protocol delivers it.
    static func dataTask(
        _ cache: HTTPCache, _ url: URL, bodies: WebCacheURLProtocol.BodyDelivery = .asItArrives
    ) -> (URLSession, Received) {
        let configuration = URLSessionConfiguration.ephemeral
        WebCacheURLProtocol.install(cache, into: configuration, bodies: bodies)
        let received = Received()
        let session = URLSession(configuration: configuration, delegate: received, delegateQueue: nil)
        session.dataTask(with: url).resume()
        return (session, received)
    }

    static let streamedBody = Fixtures.bytes(300_000) { UInt8(truncatingIfNeeded: $0 &* 31) }

    @Test("a body still arriving from the origin reaches the session before its end, and is stored whole")
    func arriving() async throws {
        try await EngineHarness.run { h in
            let rest = h.origin.routeHeldBody("/download", Self.streamedBody, sendingFirst: 100_000)
            defer { WebCacheURLProtocol.uninstall() }
            let (streaming, received) = Self.dataTask(h.cache, h.origin.url("/download"))
            defer { streaming.invalidateAndCancel() }
            let early = await received.wait { !$0.bytes.isEmpty }
            let finishedEarly = received.finished
            rest.open()
            #expect(early, "nothing reached the session before the origin sent the rest")
            #expect(!finishedEarly)
            #expect(await received.wait { $0.finished })
            #expect(received.error == nil)
            #expect(byteDifference(received.bytes, Self.streamedBody) == nil)
            // Stored while it streamed: the next request is a hit.
            let (again, response) = try await session(h.cache).data(from: h.origin.url("/download"))
            #expect(again == Self.streamedBody)
            #expect(
                (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Cache-Status")?.hasPrefix("WebCache; hit")
                    == true)
            #expect(h.origin.count("/download") == 1)
        }
    }

    @Test(
        "a task cancelled while the origin sends nothing stops loading at once: a body nobody else reads is given up, its origin connection closed"
    )
    func cancelledWhileOriginSilent() async throws {
        try await EngineHarness.run { h in
            let rest = h.origin.routeHeldBody(
                "/feed", Self.streamedBody, sendingFirst: 8 << 10, cacheControl: "no-store")
            defer { WebCacheURLProtocol.uninstall() }
            let (streaming, received) = Self.dataTask(h.cache, h.origin.url("/feed"))
            #expect(await received.wait { !$0.bytes.isEmpty })
            streaming.invalidateAndCancel()
            // Well inside the origin client's 10 s limit, which would close it anyway.
            let open = try await h.origin.connectionsOpen(afterWaitingAtMost: .seconds(5))
            rest.open()
            #expect(open == 0, "the origin connection was kept for a task that was cancelled")
        }
    }

    @Test("delivered whole, nothing reaches the session before the body's end")
    func whole() async throws {
        try await EngineHarness.run { h in
            let rest = h.origin.routeHeldBody("/download", Self.streamedBody, sendingFirst: 100_000)
            defer { WebCacheURLProtocol.uninstall() }
            let (streaming, received) = Self.dataTask(h.cache, h.origin.url("/download"), bodies: .whole)
            defer { streaming.invalidateAndCancel() }
            await rest.arrivals(1)
            try await Task.sleep(for: .milliseconds(200))
            #expect(received.bytes.isEmpty)
            rest.open()
            #expect(await received.wait { $0.finished })
            #expect(byteDifference(received.bytes, Self.streamedBody) == nil)
        }
    }

    @Test(
        "a body the origin cuts short ends the task with an error, not as a whole body",
        arguments: [
            WebCacheURLProtocol.BodyDelivery.asItArrives, .whole,
        ])
    func cutShort(bodies: WebCacheURLProtocol.BodyDelivery) async throws {
        try await EngineHarness.run { h in
            h.origin.route("/cut") { _ in
                var response = TestOrigin.Response(headers: [("Cache-Control", "max-age=60")], body: Self.streamedBody)
                response.cutAfter = 120_000
                return response
            }
            defer { WebCacheURLProtocol.uninstall() }
            let (streaming, received) = Self.dataTask(h.cache, h.origin.url("/cut"), bodies: bodies)
            defer { streaming.invalidateAndCancel() }
            #expect(await received.wait { $0.finished })
            #expect(received.error != nil)
            #expect(received.bytes.count < Self.streamedBody.count)
            if bodies == .whole { #expect(received.bytes.isEmpty) }
        }
    }
}
