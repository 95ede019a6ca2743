import Foundation
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheStore

extension EngineHarness {
    /// Overwrites bytes of the first body file in the cache's directory, at `offset`, keeping
    /// its length (a damaged disk).
    public func corruptBodyFile(at offset: UInt64) throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".body")
        }
        guard let name = files.first else { throw HarnessError(description: "no body file in \(directory.path)") }
        let handle = try FileHandle(forWritingTo: directory.appendingPathComponent(name))
        try handle.seek(toOffset: offset)
        handle.write(Data("corrupt".utf8))
        try handle.close()
    }

    /// Runs `body` with another cache on the same directory, reading the same clock, as another
    /// process would open it: its memory holds no body, so it reads and checks the files. The
    /// entries of `paths` are in the index first (a response ends once its row is on its way,
    /// and only the store that wrote it waits for the row).
    public func withAnotherCache(after paths: [String], _ body: (HTTPCache) async throws -> Void) async throws {
        for path in paths {
            guard let key = CacheKey(url: origin.url(path)) else { continue }
            await cache.store.entryOnItsWayWritten(key)
        }
        let network = AsyncHTTPClientOrigin()
        try await withCleanup({ try? await network.shutdown() }) {
            let clock = self.clock
            let other = try HTTPCache(
                configuration: .init(store: CacheStore.Configuration(directory: directory), now: { clock.now }),
                origin: network)
            try await body(other)
        }
    }

    /// What the harness could not do.
    public struct HarnessError: Error, CustomStringConvertible {
        public var description: String
    }
}
