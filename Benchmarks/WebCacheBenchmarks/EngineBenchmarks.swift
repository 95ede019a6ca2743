import Foundation
import HTTPCaching
import HTTPTypes
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheStore
import WebCacheTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The engine benchmarks of issue 4: a fresh hit through `HTTPCache`, and a stampede of 1,000
/// concurrent requests for one URL, beside URLSession with Foundation's URLCache.
struct EngineBenchmarks {
    var log: (String) -> Void

    func run() async throws -> [Measurement] {
        let origin = TestOrigin()
        try await origin.start()
        origin.route("/1k") { _ in
            .init(status: 200, headers: [("Cache-Control", "max-age=3600")], body: BenchFixtures.body(1024))
        }
        origin.route("/slow") { _ in
            .init(
                status: 200, headers: [("Cache-Control", "max-age=3600")], body: BenchFixtures.body(1024),
                delay: .milliseconds(50))
        }
        var results: [Measurement] = []
        do {
            for memory in [32 << 20, 0] { results.append(try await freshHit(origin, memory: memory)) }
            results += try await stampede(origin)
        } catch {
            try? await origin.stop()
            throw error
        }
        try await origin.stop()
        return results
    }

    func freshHit(_ origin: TestOrigin, memory: Int) async throws -> Measurement {
        log("engine fresh hit, \(memory > 0 ? "memory" : "disk")")
        let directory = BenchFixtures.temporaryDirectory("engine")
        defer { try? FileManager.default.removeItem(at: directory) }
        let network = AsyncHTTPClientOrigin()
        var store = CacheStore.Configuration(directory: directory)
        store.memoryCapacity = memory
        let cache = try HTTPCache(configuration: .init(store: store), origin: network)
        let request = HTTPRequest(method: .get, url: origin.url("/1k"))
        _ = try await cache.response(for: request)
        var samples: [Double] = []
        for _ in 0..<15 {
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<2000 {
                let response = try await cache.response(for: request)
                precondition(response.isFromCache && response.body.count == 1024)
            }
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 2000)
        }
        try await network.shutdown()
        samples.sort()
        return Measurement(
            group: "engine fresh hit 1 KB", name: memory > 0 ? "from memory" : "from disk",
            webCache: samples[samples.count / 2],
            note: "HTTPCache.response(for:) with Age and Cache-Status")
    }

    /// 1,000 concurrent requests for one URL whose origin takes 50 ms.
    func stampede(_ origin: TestOrigin) async throws -> [Measurement] {
        log("1,000 concurrent requests for one URL")
        let directory = BenchFixtures.temporaryDirectory("stampede")
        defer { try? FileManager.default.removeItem(at: directory) }
        let network = AsyncHTTPClientOrigin()
        let cache = try HTTPCache(
            configuration: .init(store: CacheStore.Configuration(directory: directory)), origin: network)
        let request = HTTPRequest(method: .get, url: origin.url("/slow"))
        let before = origin.count("/slow")
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<1000 { group.addTask { _ = try await cache.response(for: request) } }
            try await group.waitForAll()
        }
        let ours = Double(DispatchTime.now().uptimeNanoseconds - start)
        let ourFetches = origin.count("/slow") - before
        try await network.shutdown()

        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 64 << 20, diskCapacity: 0, diskPath: nil)
        configuration.httpMaximumConnectionsPerHost = 64
        let session = URLSession(configuration: configuration)
        let url = origin.url("/slow")
        let beforeTheirs = origin.count("/slow")
        let startTheirs = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<1000 { group.addTask { _ = try await session.data(from: url) } }
            try await group.waitForAll()
        }
        let theirs = Double(DispatchTime.now().uptimeNanoseconds - startTheirs)
        let theirFetches = origin.count("/slow") - beforeTheirs
        session.invalidateAndCancel()
        return [
            Measurement(
                group: "1,000 concurrent requests", name: "total time", webCache: ours, urlCache: theirs,
                note: "origin fetches: WebCache \(ourFetches), URLSession+URLCache \(theirFetches)")
        ]
    }
}
