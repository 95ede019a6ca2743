import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

@Suite("Engine: the request path against a real origin")
struct RequestPathTests {
    @Test("a fresh response is served from the cache with Age and Cache-Status")
    func freshHit() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/a") { _ in .text("hello", headers: [("Cache-Control", "max-age=60")]) }
            let first = try await h.get("/a")
            #expect(first.text == "hello")
            #expect(first.statusLine == "WebCache; fwd=uri-miss; fwd-status=200; ttl=60; stored")
            h.clock.advance(10)
            let second = try await h.get("/a")
            #expect(second.text == "hello")
            #expect(second.isFromCache)
            #expect(second.statusLine == "WebCache; hit; ttl=50")
            #expect(second.head.headerFields[.age] == "10")
            #expect(h.origin.count("/a") == 1)
            #expect(h.cache.counters.hits == 1 && h.cache.counters.misses == 1)
        }
    }

    @Test("ETag revalidation: the origin sees If-None-Match, its 304 refreshes the stored head")
    func etagRevalidation() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/e") { request in
                if request.header("If-None-Match") == "\"v1\"" {
                    return .init(
                        status: 304,
                        headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=100"), ("X-Refreshed", "yes")])
                }
                return .text("body-v1", headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=1")])
            }
            _ = try await h.get("/e")
            h.clock.advance(5)
            let revalidated = try await h.get("/e")
            #expect(revalidated.text == "body-v1")
            #expect(revalidated.head.status == .ok)
            #expect(revalidated.statusLine.contains("fwd=stale; fwd-status=304"))
            #expect(revalidated.head.headerFields[HTTPField.Name("X-Refreshed")!] == "yes")
            #expect(h.origin.requests(to: "/e").last?.header("If-None-Match") == "\"v1\"")
            h.clock.advance(50)
            let response1 = try await h.get("/e")
            #expect(response1.isFromCache)  // fresh again for 100 s
            #expect(h.origin.count("/e") == 2)
        }
    }

    @Test("Last-Modified revalidation sends If-Modified-Since")
    func lastModifiedRevalidation() async throws {
        try await EngineHarness.run { h in
            let lastModified = "Wed, 01 Jan 2020 00:00:00 GMT"
            h.origin.route("/lm") { request in
                request.header("If-Modified-Since") == lastModified
                    ? .init(status: 304)
                    : .text("lm", headers: [("Last-Modified", lastModified), ("Cache-Control", "no-cache")])
            }
            _ = try await h.get("/lm")
            let second = try await h.get("/lm")
            #expect(second.text == "lm")
            #expect(second.statusLine.contains("fwd-status=304"))
            #expect(h.origin.requests(to: "/lm").last?.header("If-Modified-Since") == lastModified)
        }
    }

    @Test("a changed resource replaces the stored one")
    func replacedOnChange() async throws {
        try await EngineHarness.run { h in
            let version = Counter()
            h.origin.route("/c") { _ in
                .text(
                    "v\(version.next())", headers: [("ETag", "\"\(version.value)\""), ("Cache-Control", "max-age=1")])
            }
            let response2 = try await h.get("/c")
            #expect(response2.text == "v1")
            h.clock.advance(2)
            let response3 = try await h.get("/c")
            #expect(response3.text == "v2")
            let response4 = try await h.get("/c")
            #expect(response4.text == "v2")
            #expect(h.origin.count("/c") == 2)
        }
    }

    @Test("Vary: each variant is stored and served to matching requests")
    func varyVariants() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/v") { request in
                .text(
                    "lang=\(request.header("Accept-Language") ?? "none")",
                    headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")])
            }
            let response5 = try await h.get("/v", ["Accept-Language: en"])
            #expect(response5.text == "lang=en")
            let response6 = try await h.get("/v", ["Accept-Language: de"])
            #expect(response6.text == "lang=de")
            let response7 = try await h.get("/v", ["Accept-Language: en"])
            #expect(response7.isFromCache)
            let german = try await h.get("/v", ["Accept-Language: de"])
            #expect(german.isFromCache && german.text == "lang=de")
            #expect(h.origin.count("/v") == 2)
        }
    }

    @Test("POST reaches the origin with its body and invalidates the stored GET (RFC 9111 §4.4)")
    func postInvalidates() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/r") { request in
                request.method == "POST"
                    ? .text("posted \(request.body.count)") : .text("get", headers: [("Cache-Control", "max-age=600")])
            }
            _ = try await h.get("/r")
            let response8 = try await h.get("/r")
            #expect(response8.isFromCache)
            let payload = Data((0..<10_000).map { UInt8($0 % 251) })
            let posted = try await h.send(.post, "/r", body: payload, ["Content-Type: application/octet-stream"])
            #expect(posted.text == "posted 10000")
            #expect(posted.statusLine.contains("fwd=method"))
            #expect(h.origin.requests(to: "/r").last?.body == payload)
            let afterPost = try await h.get("/r")
            #expect(!afterPost.isFromCache)
            #expect(h.origin.count("/r") == 3)
        }
    }

    @Test("HEAD is answered from a stored GET, without a body")
    func headFromGet() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/h") { _ in .text("full body", headers: [("Cache-Control", "max-age=60")]) }
            _ = try await h.get("/h")
            let head = try await h.send(.head, "/h")
            #expect(head.isFromCache && head.body.isEmpty)
            #expect(head.head.headerFields[.contentLength] == "9")
            #expect(h.origin.count("/h") == 1)
        }
    }

    @Test("the client's own If-None-Match gets a 304 from the cache")
    func clientConditional() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/t") { _ in .text("tagged", headers: [("Cache-Control", "max-age=60"), ("ETag", "\"t1\"")])
            }
            _ = try await h.get("/t")
            let conditional = try await h.get("/t", ["If-None-Match: \"t1\""])
            #expect(conditional.head.status == .notModified && conditional.body.isEmpty)
            #expect(conditional.head.headerFields[.eTag] == "\"t1\"")
            #expect(h.origin.count("/t") == 1)
        }
    }

    @Test("1,000 concurrent identical requests reach the origin once")
    func coalescing() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/slow") { _ in
                .init(
                    status: 200, headers: [("Cache-Control", "max-age=60")], body: Data("slow".utf8),
                    delay: .milliseconds(300))
            }
            let results = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<1000 { group.addTask { try await h.get("/slow").text } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(results.count == 1000 && results.allSatisfy { $0 == "slow" })
            #expect(h.origin.count("/slow") == 1)
        }
    }

    @Test(
        "concurrent requests for different variants each get their own answer from the origin; alike ones share one fetch"
    )
    func coalescingKeepsVariantsApart() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/slow") { request in
                .init(
                    status: 200, headers: [("Cache-Control", "max-age=60"), ("Vary", "Accept-Language")],
                    body: Data((request.header("Accept-Language") ?? "none").utf8), delay: .milliseconds(300))
            }
            let asked = ["Accept-Language: de", "Accept-Language: fr", "Accept-Language: de", "Cookie: a=1", ""]
            let results = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for (index, header) in asked.enumerated() {
                    group.addTask { (index, try await h.get("/slow", header.isEmpty ? [] : [header]).text) }
                }
                return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
            }
            #expect(results == [0: "de", 1: "fr", 2: "de", 3: "none", 4: "none"])
            #expect(h.origin.count("/slow") == 4, "de twice is one fetch; fr, the cookie and none are their own")
        }
    }

    @Test(
        "a waiter that is cancelled does not cancel the shared fetch (the overlap arranged by a gate, without sleeps)")
    func cancelledWaiter() async throws {
        try await TemporaryDirectory.with { directory in
            let gate = OriginGate()
            let origin = InMemoryOrigin.cacheable(gate: gate)
            let cache = try HTTPCache(
                configuration: .init(store: .init(directory: directory), rules: .private), origin: origin)
            let request = Fixtures.request(.get, "https://shop.test/shared")
            let impatient = Task { try await cache.response(for: request) }
            await gate.arrivals(1)  // its fetch is under way, held at the origin
            impatient.cancel()
            let patient = Task { try await cache.response(for: request) }
            // The patient request reaches the engine (and joins the fetch) before the origin answers.
            for _ in 0..<100_000 where cache.counters.requests < 2 { await Task.yield() }
            #expect(cache.counters.requests == 2)
            gate.open()
            #expect(try await patient.value.body == Data("body of /shared".utf8))
            _ = await impatient.result
            #expect(origin.count("/shared") == 1, "the cancelled waiter's fetch went on, and the patient one shared it")
            let again = try await cache.response(for: request)
            #expect(again.isFromCache)
            await cache.waitForBackgroundWork()
        }
    }
}
