import Foundation
import WebCacheStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The store benchmarks of issue 3, WebCache beside Foundation's URLCache on the same bodies.
struct StoreBenchmarks {
    var quick: Bool
    var log: (String) -> Void

    func run() throws -> [Measurement] {
        var results: [Measurement] = []
        for size in [1024, 1 << 20] { results.append(try memoryHit(size: size)) }
        for size in [1024, 128 << 10, 1 << 20] { results.append(try diskHit(size: size)) }
        for size in [1024, 1 << 20] { results.append(try store(size: size)) }
        for size in [16 << 10, 1 << 20] { results.append(bodyChecksum(size: size)) }
        results += try lookupFlatness()
        return results
    }

    /// Times an operation adaptively: about 20 ms per sample, within `budget` seconds in all.
    func time(budget: Double = 3, _ operation: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try operation()
        let once = max(1, Double(DispatchTime.now().uptimeNanoseconds - start))
        let iterations = max(1, Int(20_000_000 / once))
        let samples = min(15, max(3, Int(budget * 1e9 / (once * Double(iterations)))))
        return try medianTime(samples: samples, iterations: iterations, warmup: 1, operation)
    }

    func label(_ size: Int) -> String {
        size >= 1 << 20 ? "\(size >> 20) MB" : "\(size >> 10) KB"
    }

    func memoryHit(size: Int) throws -> Measurement {
        log("memory hit \(label(size))")
        let directory = BenchFixtures.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try BenchFixtures.store(directory, memory: 512 << 20)
        let url = BenchFixtures.url(0, size: size)
        let body = BenchFixtures.body(size)
        try store.store(BenchFixtures.newEntry(url), body: body)
        let key = CacheKey(url: url)!
        let ours = try time {
            let entries = try store.lookup(key)
            let body = try store.readBody(entries[0])
            precondition(body.count == size)
        }
        let urlCache = URLCache(memoryCapacity: 512 << 20, diskCapacity: 0, diskPath: nil)
        let request = URLRequest(url: url)
        urlCache.storeCachedResponse(BenchFixtures.cachedURLResponse(url, body: body), for: request)
        let theirs = try time {
            guard let cached = urlCache.cachedResponse(for: request) else {
                throw BenchError("URLCache lost a memory entry")
            }
            precondition(cached.data.count == size)
        }
        return Measurement(group: "memory hit", name: label(size), webCache: ours, urlCache: theirs)
    }

    func diskHit(size: Int) throws -> Measurement {
        log("disk hit \(label(size))")
        let directory = BenchFixtures.temporaryDirectory("disk")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try BenchFixtures.store(directory.appendingPathComponent("webcache"), memory: 0)
        let url = BenchFixtures.url(0, size: size)
        let body = BenchFixtures.body(size)
        try store.store(BenchFixtures.newEntry(url), body: body)
        let key = CacheKey(url: url)!
        let ours = try time {
            let entries = try store.lookup(key)
            let body = try store.readBody(entries[0])
            precondition(body.count == size)
        }
        let urlCache = URLCache(
            memoryCapacity: 0, diskCapacity: 4 << 30, diskPath: directory.appendingPathComponent("urlcache").path)
        let request = URLRequest(url: url)
        urlCache.storeCachedResponse(BenchFixtures.cachedURLResponse(url, body: body), for: request)
        try waitUntilStored(urlCache, request)
        let theirs = try time(budget: 5) {
            guard let cached = urlCache.cachedResponse(for: request) else {
                throw BenchError("URLCache lost a disk entry")
            }
            precondition(cached.data.count == size)
        }
        return Measurement(group: "disk hit", name: label(size), webCache: ours, urlCache: theirs)
    }

    func store(size: Int) throws -> Measurement {
        log("store \(label(size))")
        let directory = BenchFixtures.temporaryDirectory("store")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try BenchFixtures.store(directory.appendingPathComponent("webcache"), memory: 0)
        let body = BenchFixtures.body(size)
        var index = 0
        let ours = try time {
            index += 1
            try store.store(BenchFixtures.newEntry(BenchFixtures.url(index, size: size)), body: body)
        }
        let urlCache = URLCache(
            memoryCapacity: 0, diskCapacity: 8 << 30, diskPath: directory.appendingPathComponent("urlcache").path)
        let theirs = time(budget: 5) {
            index += 1
            let url = BenchFixtures.url(index, size: size)
            urlCache.storeCachedResponse(BenchFixtures.cachedURLResponse(url, body: body), for: URLRequest(url: url))
        }
        return Measurement(
            group: "store", name: label(size), webCache: ours, urlCache: theirs, note: "a new URL each time")
    }

    /// The checksum every stored body gets (and every body file on its first read), against
    /// zlib's CRC-32 that computed it before: the same values.
    func bodyChecksum(size: Int) -> Measurement {
        log("body checksum \(label(size))")
        let body = BenchFixtures.body(size)
        let (expected, same) = body.withUnsafeBytes { (BodyChecksum.crc32ByZlib($0), BodyChecksum.crc32($0)) }
        precondition(same == expected, "the two CRC-32s differ")
        var differing = 0
        let ours = body.withUnsafeBytes { bytes in
            time(budget: 2) { if BodyChecksum.crc32(bytes) != expected { differing += 1 } }
        }
        let zlib = body.withUnsafeBytes { bytes in
            time(budget: 2) { if BodyChecksum.crc32ByZlib(bytes) != expected { differing += 1 } }
        }
        precondition(differing == 0, "a CRC-32 changed between runs")
        return Measurement(
            group: "body checksum", name: label(size), webCache: ours,
            note: String(format: "zlib's crc32: %@ (%.1f× as long)", formatDuration(zlib), zlib / ours))
    }

    /// The 1 KB disk hit as the store grows, then opening a store of 10^5 entries.
    func lookupFlatness() throws -> [Measurement] {
        var results: [Measurement] = []
        let counts = quick ? [1000, 100_000] : [1000, 100_000, 1_000_000]
        var first: Double?
        var coldResult: Measurement?
        for count in counts {
            log("disk hit with \(count) entries (filling)")
            let directory = BenchFixtures.temporaryDirectory("flat")
            defer { try? FileManager.default.removeItem(at: directory) }
            let storeDirectory = directory.appendingPathComponent("webcache")
            var store: CacheStore? = try BenchFixtures.store(storeDirectory, memory: 0)
            try BenchFixtures.fill(store!, count: count)
            var generator = SystemRandomNumberGenerator()
            let keys = (0..<1000).map { _ in
                CacheKey(url: BenchFixtures.url(Int.random(in: 0..<count, using: &generator), size: 1024))!
            }
            // The same hot set of 1,000 keys at every size, warmed first, so that each size
            // measures the same work; cold first touches are measured separately below.
            func hit(_ key: CacheKey) throws {
                let entries = try store!.lookup(key)
                let body = try store!.readBody(entries[0])
                precondition(body.count == 1024)
            }
            for _ in 0..<2 { for key in keys { try hit(key) } }
            var next = 0
            let ours = try time {
                next = (next + 1) % keys.count
                try hit(keys[next])
            }
            if count == counts.last {
                let cold = (0..<2000).map { _ in
                    CacheKey(url: BenchFixtures.url(Int.random(in: 0..<count, using: &generator), size: 1024))!
                }
                let start = DispatchTime.now().uptimeNanoseconds
                for key in cold { try hit(key) }
                let perLookup = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(cold.count)
                coldResult = Measurement(
                    group: "disk hit 1 KB", name: "\(count) entries, first touch", webCache: perLookup,
                    note: "keys not read before (mean of 2,000)")
            }
            var theirs: Double?
            if count == 1000 {
                let urlCache = URLCache(
                    memoryCapacity: 0, diskCapacity: 4 << 30,
                    diskPath: directory.appendingPathComponent("urlcache").path)
                let body = BenchFixtures.body(1024)
                for index in 0..<count {
                    let url = BenchFixtures.url(index, size: 1024)
                    urlCache.storeCachedResponse(
                        BenchFixtures.cachedURLResponse(url, body: body), for: URLRequest(url: url))
                }
                try waitUntilStored(urlCache, URLRequest(url: BenchFixtures.url(count - 1, size: 1024)))
                let requests = keys.map { URLRequest(url: URL(string: $0.url)!) }
                theirs = try time(budget: 5) {
                    next = (next + 1) % requests.count
                    guard urlCache.cachedResponse(for: requests[next]) != nil else {
                        throw BenchError("URLCache lost an entry")
                    }
                }
            }
            first = first ?? ours
            let growth = String(format: "%.2f× the 10^3 figure", ours / first!)
            results.append(
                Measurement(
                    group: "disk hit 1 KB", name: "\(count) entries", webCache: ours, urlCache: theirs, note: growth))
            if count == 100_000 {
                log("open with \(count) entries")
                store = nil
                let open = try medianTime(samples: 7, iterations: 1, warmup: 1) {
                    _ = try BenchFixtures.store(storeDirectory, memory: 0)
                }
                results.append(
                    Measurement(
                        group: "open", name: "\(count) entries", webCache: open, note: "recovery sweep included"))
            }
        }
        if let coldResult { results.append(coldResult) }
        return results
    }

    private func waitUntilStored(_ cache: URLCache, _ request: URLRequest) throws {
        for _ in 0..<500 {
            if cache.cachedResponse(for: request) != nil { return }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw BenchError("URLCache never stored \(request.url!)")
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
