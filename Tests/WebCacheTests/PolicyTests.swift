import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheStore
import WebCacheTestSupport
import WebCacheYAML

@Suite("Engine: app policies")
struct PolicyTests {
    @Test("a TTL override replaces the response's own lifetime")
    func ttlOverride() async throws {
        let policy = CachePolicy(lifetimes: [.init(urlPatterns: ["*/static/*"], ttl: 3600)])
        try await EngineHarness.run(policy: policy) { h in
            h.origin.route("/static/app.js") { _ in
                .text("js", headers: [("Cache-Control", "max-age=0"), ("Content-Type", "application/javascript")])
            }
            _ = try await h.get("/static/app.js")
            h.clock.advance(1800)
            let hit = try await h.get("/static/app.js")
            #expect(hit.isFromCache)
            h.clock.advance(3600)
            _ = try await h.get("/static/app.js")
            #expect(h.origin.count("/static/app.js") == 2)
        }
    }

    @Test(
        "lifetimes far beyond any date, or negative, are served by, never a trap",
        arguments: [Int.max, Int.max / 2, 1 << 53, -(1 << 53), Int.min])
    func extremeLifetimes(_ ttl: Int) async throws {
        let policy = CachePolicy(lifetimes: [
            .init(urlPatterns: ["*/fixed"], ttl: ttl), .init(urlPatterns: ["*/sliding"], ttl: ttl, slidingExpiry: true),
            .init(urlPatterns: ["*/default"], defaultTTL: ttl),
        ])
        try await EngineHarness.run(policy: policy) { h in
            for path in ["/fixed", "/sliding", "/default"] {
                h.origin.route(path) { _ in .text("body") }
                _ = try await h.get(path)
                h.clock.advance(10)
                let again = try await h.get(path)
                #expect(again.isFromCache == (ttl > 0), "\(path)")
                _ = try h.cache.explain(Fixtures.request(.get, h.origin.url(path).absoluteString, []))
            }
            h.cache.store.flushAccesses()
            #expect(try h.cache.store.entries().count == 3)
        }
    }

    @Test("a network timeout past any wait is counted up to 2^31 s, never a trap; 0 turns it off")
    func extremeNetworkTimeout() throws {
        let configuration = HTTPCache.Configuration(directory: URL(fileURLWithPath: "/tmp/unused"))
        #expect(configuration.networkTimeout(under: CachePolicy(networkTimeout: 1e300)) == .seconds(2_147_483_648))
        #expect(configuration.networkTimeout(under: CachePolicy(networkTimeout: 2.5)) == .milliseconds(2_500))
        #expect(configuration.networkTimeout(under: CachePolicy(networkTimeout: 0)) == nil)
        let loaded = try CachePolicy.parse("networkTimeout: 1e300")
        #expect(configuration.networkTimeout(under: loaded) == .seconds(2_147_483_648))
    }

    @Test("a default lifetime applies only when the response gives none")
    func defaultTTL() async throws {
        let policy = CachePolicy(lifetimes: [.init(defaultTTL: 600)])
        try await EngineHarness.run(policy: policy) { h in
            h.origin.route("/none") { _ in .text("none") }
            h.origin.route("/short") { _ in .text("short", headers: [("Cache-Control", "max-age=5")]) }
            _ = try await h.get("/none")
            _ = try await h.get("/short")
            h.clock.advance(60)
            let none = try await h.get("/none")
            let short = try await h.get("/short")
            #expect(none.isFromCache)
            #expect(!short.isFromCache)
        }
    }

    @Test("lifetimes by content type: long for CSS and JS, short for images")
    func contentTypeLifetimes() async throws {
        let policy = CachePolicy(lifetimes: [
            .init(contentTypes: ["text/css", "application/javascript"], ttl: 86_400),
            .init(contentTypes: ["image/"], ttl: 60),
        ])
        try await EngineHarness.run(policy: policy) { h in
            h.origin.route("/s.css") { _ in
                .init(status: 200, headers: [("Content-Type", "text/css")], body: Data("a{}".utf8))
            }
            h.origin.route("/i.png") { _ in
                .init(status: 200, headers: [("Content-Type", "image/png")], body: Data([1, 2, 3]))
            }
            _ = try await h.get("/s.css")
            _ = try await h.get("/i.png")
            h.clock.advance(3600)
            let css = try await h.get("/s.css")
            let image = try await h.get("/i.png")
            #expect(css.isFromCache && !image.isFromCache)
        }
    }

    @Test("sliding expiry: each hit extends the app-set expiry")
    func slidingExpiry() async throws {
        let policy = CachePolicy(lifetimes: [.init(ttl: 100, slidingExpiry: true)])
        try await EngineHarness.run(policy: policy) { h in
            h.origin.route("/slide") { _ in .text("s") }
            _ = try await h.get("/slide")
            for _ in 0..<5 {
                h.clock.advance(80)
                let hit = try await h.get("/slide")
                #expect(hit.isFromCache)
                h.cache.store.flushAccesses()
            }
            #expect(h.origin.count("/slide") == 1)
        }
    }

    @Test("the allow-list passes other traffic through uncached; a User-Agent suffix can opt in")
    func allowList() async throws {
        let policy = CachePolicy(allow: .init(urlPatterns: ["*/cached/*"], userAgentSuffixes: ["MyApp/1.0"]))
        try await EngineHarness.run(policy: policy) { h in
            h.origin.route("/cached/a") { _ in .text("a", headers: [("Cache-Control", "max-age=60")]) }
            h.origin.route("/other") { _ in .text("o", headers: [("Cache-Control", "max-age=60")]) }
            _ = try await h.get("/cached/a", ["User-Agent: Browser MyApp/1.0"])
            let hit = try await h.get("/cached/a", ["User-Agent: Browser MyApp/1.0"])
            #expect(hit.isFromCache)
            let otherAgent = try await h.get("/cached/a", ["User-Agent: curl"])
            #expect(!otherAgent.isFromCache && otherAgent.statusLine.contains("fwd=bypass"))
            _ = try await h.get("/other", ["User-Agent: Browser MyApp/1.0"])
            let other = try await h.get("/other", ["User-Agent: Browser MyApp/1.0"])
            #expect(!other.isFromCache && h.origin.count("/other") == 2)
            #expect(try h.cache.store.statistics().entries == 1)
        }
    }

    @Test("blocked URLs get an empty response and never reach the network")
    func blockList() async throws {
        let policy = CachePolicy(block: .init(hostSuffixes: ["ads.example"], urlPatterns: ["*/banner/*"]))
        try await EngineHarness.run(policy: policy) { h in
            let banner = try await h.get("/banner/top.gif")
            #expect(banner.body.isEmpty && banner.head.status == .ok && banner.statusLine.contains("detail=blocked"))
            let tracker = try await h.cache.response(for: Fixtures.request(.get, "http://tracker.ads.example/pixel"))
            #expect(tracker.body.isEmpty)
            #expect(h.origin.requests().isEmpty)
            #expect(h.cache.counters.blocked == 2)
        }
    }

    @Test("the willCache hook can change or refuse what is stored")
    func willCacheHook() async throws {
        try await EngineHarness.run(adjust: { configuration in
            configuration.willCache = { request, response in
                if request.url?.path == "/secret" { return nil }
                var changed = response
                changed.headerFields[HTTPField.Name("X-Stored-By")!] = "hook"
                return changed
            }
        }) { h in
            h.origin.route("/secret") { _ in .text("s", headers: [("Cache-Control", "max-age=60")]) }
            h.origin.route("/open") { _ in .text("o", headers: [("Cache-Control", "max-age=60")]) }
            _ = try await h.get("/secret")
            _ = try await h.get("/open")
            let secret = try await h.get("/secret")
            let open = try await h.get("/open")
            #expect(!secret.isFromCache)
            #expect(open.isFromCache && open.head.headerFields[HTTPField.Name("X-Stored-By")!] == "hook")
        }
    }

    @Test("the cache can be disabled and re-enabled at run time, and cleared by host or URL")
    func enableDisableClear() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/x") { _ in .text("x", headers: [("Cache-Control", "max-age=60")]) }
            h.origin.route("/y") { _ in .text("y", headers: [("Cache-Control", "max-age=60")]) }
            _ = try await h.get("/x")
            h.cache.updatePolicy { $0.enabled = false }
            let disabled = try await h.get("/x")
            #expect(!disabled.isFromCache && disabled.statusLine.contains("detail=disabled"))
            h.cache.updatePolicy { $0.enabled = true }
            let enabled = try await h.get("/x")
            #expect(enabled.isFromCache)
            _ = try await h.get("/y")
            #expect(try h.cache.clear(url: h.origin.url("/x")) == 1)
            let cleared = try await h.get("/x")
            #expect(!cleared.isFromCache)
            #expect(try h.cache.clear(host: "127.0.0.1") == 2)
            try h.cache.clear()
            #expect(try h.cache.store.statistics().entries == 0)
        }
    }

    @Test("a failing store never fails a request the origin can serve")
    func failingStore() async throws {
        try await EngineHarness.run(adjust: { configuration in
            configuration.store.inlineBodyLimit = 0
            configuration.store.writeFault = { _ in throw POSIXError(.ENOSPC) }
        }) { h in
            h.origin.route("/big") { _ in
                .text(String(repeating: "x", count: 50_000), headers: [("Cache-Control", "max-age=60")])
            }
            let first = try await h.get("/big")
            let second = try await h.get("/big")
            #expect(first.body.count == 50_000 && second.body.count == 50_000)
            #expect(!second.isFromCache)
        }
    }

    @Test("policies load from YAML; bad files are clear errors")
    func yaml() throws {
        let policy = try CachePolicy.parse(
            """
            enabled: true
            offlineMaxStale: 604800
            allow:
              hosts: [example.com]
            block:
              hostSuffixes: [doubleclick.net]
              urlPatterns: ["*/ads/*"]
            lifetimes:
              - contentTypes: [text/css, application/javascript]
                ttl: 2592000
              - hosts: [api.example.com]
                defaultTTL: 60
                slidingExpiry: true
            """)
        #expect(policy.offlineMaxStale == 604_800)
        #expect(policy.allow?.hosts == ["example.com"])
        #expect(policy.blocks(URL(string: "https://x.doubleclick.net/a")!))
        #expect(policy.blocks(URL(string: "https://example.com/ads/1.js")!))
        #expect(!policy.blocks(URL(string: "https://example.com/app.js")!))
        #expect(
            policy.lifetimeRule(
                for: URL(string: "https://cdn.example.com/a.css")!, contentType: "text/css; charset=utf-8")?.ttl
                == 2_592_000)
        #expect(
            policy.lifetimeRule(for: URL(string: "https://api.example.com/v1")!, contentType: "application/json")?
                .slidingExpiry == true)
        #expect(try CachePolicy.parse("{}") == CachePolicy())
        #expect(throws: PolicyError.self) { try CachePolicy.parse("lifetimes: 5") }
        #expect(throws: PolicyError.self) {
            try CachePolicy.load(from: URL(fileURLWithPath: "/nonexistent/webcache.yaml"))
        }
    }

    @Test(
        "URL patterns and host suffixes",
        arguments: [
            ("*/ads/*", "https://example.com/ads/1.js", true),
            ("*/ads/*", "https://example.com/nads", false),
            ("https://EXAMPLE.com/*", "https://example.com/a", true),
            ("*.gif", "https://a.b/c.GIF", true),
            ("https://a.b/exact", "https://a.b/exact", true),
            ("https://a.b/exact", "https://a.b/exact/more", false),
        ])
    func patterns(pattern: String, url: String, matches: Bool) {
        #expect(URLPattern(pattern).matches(url) == matches)
    }
}

@Suite("Configuration file: storage settings")
struct StorageSettingsTests {
    @Test("capacities and a sub-directory come from the storage section")
    func storage() throws {
        let settings = try StorageSettings.parse(
            """
            enabled: true
            storage:
              subdirectory: articles
              memoryCapacity: 1000
              diskCapacity: 2000
              maximumEntrySize: 300
              maximumVariants: 3
            """)
        var configuration = CacheStore.Configuration(directory: URL(fileURLWithPath: "/tmp/wc"))
        try settings.apply(to: &configuration)
        #expect(configuration.directory.path == "/tmp/wc/articles")
        #expect(
            configuration.memoryCapacity == 1000 && configuration.diskCapacity == 2000
                && configuration.maximumEntrySize == 300 && configuration.maximumVariants == 3)
        #expect(try StorageSettings.parse("enabled: false") == StorageSettings())
        var escaping = configuration
        #expect(throws: PolicyError.self) { try StorageSettings(subdirectory: "../elsewhere").apply(to: &escaping) }
        #expect(throws: PolicyError.self) { try StorageSettings(diskCapacity: -1).apply(to: &escaping) }
        #expect(throws: PolicyError.self) { try StorageSettings(maximumVariants: 0).apply(to: &escaping) }
        #expect(throws: PolicyError.self) { try StorageSettings.parse("storage: 12") }
    }
}
