import Foundation
import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Responses, bodies and directories for the benchmarks.
enum BenchFixtures {
    static let headers: [(String, String)] = [
        ("Content-Type", "application/octet-stream"), ("Cache-Control", "max-age=3600"),
        ("ETag", "\"0123456789abcdef\""), ("Date", "Sat, 21 Nov 2026 12:00:00 GMT"),
        ("Last-Modified", "Fri, 20 Nov 2026 12:00:00 GMT"), ("Server", "bench"),
    ]

    static func body(_ size: Int) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) })
    }

    static func url(_ index: Int, size: Int) -> URL {
        URL(string: "https://bench.example/assets/\(size)/item-\(index)?v=1")!
    }

    static func newEntry(_ url: URL) -> NewEntry {
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        let now = Date()
        return NewEntry(
            stored: StoredResponse(
                request: HTTPRequest(method: .get, url: url), response: HTTPResponse(status: .ok, headerFields: fields),
                requestTime: now, responseTime: now))
    }

    static func cachedURLResponse(_ url: URL, body: Data) -> CachedURLResponse {
        let response = HTTPURLResponse(
            url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: Dictionary(uniqueKeysWithValues: headers))!
        return CachedURLResponse(response: response, data: body)
    }

    static func temporaryDirectory(_ name: String) -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "webcache-bench-\(name)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func store(_ directory: URL, memory: Int) throws -> CacheStore {
        try CacheStore(
            configuration: .init(
                directory: directory, memoryCapacity: memory, diskCapacity: 64 << 30, maximumEntrySize: 1 << 30))
    }

    /// Fills a store with `count` 1 KB entries in batches.
    static func fill(_ store: CacheStore, count: Int) throws {
        let body = body(1024)
        var index = 0
        while index < count {
            let end = min(count, index + 5000)
            try store.storeBatch((index..<end).map { (entry: newEntry(url($0, size: 1024)), body: body) })
            index = end
        }
    }
}
