import Foundation
import HTTPCaching
import HTTPTypes
import WebCacheStore
import WebCacheTestSupport

extension CacheStore.Configuration {
    static func test(
        _ directory: URL, namespace: String = "default", clock: TestClock? = nil, memory: Int = 1 << 20,
        disk: Int = 64 << 20
    ) -> Self {
        var configuration = CacheStore.Configuration(
            directory: directory, namespace: namespace, memoryCapacity: memory, diskCapacity: disk,
            maximumEntrySize: 8 << 20, inlineBodyLimit: 1024)
        if let clock { configuration.now = { clock.now } }
        return configuration
    }
}

enum Entries {
    static func make(
        _ url: String, vary: [String] = [], request: [String] = [], headers: [String] = ["Cache-Control: max-age=60"],
        group: String? = nil, pinned: Bool = false, discardAfter: Date? = nil
    ) -> NewEntry {
        let response = Fixtures.response(200, headers + (vary.isEmpty ? [] : ["Vary: \(vary.joined(separator: ", "))"]))
        let stored = StoredResponse(
            request: Fixtures.request(.get, url, request), response: response,
            requestTime: Fixtures.epoch, responseTime: Fixtures.epoch)
        return NewEntry(stored: stored, discardAfter: discardAfter, group: group, isPinned: pinned)
    }

    static func body(_ size: Int, seed: UInt8 = 7) -> Data {
        Fixtures.patternedBytes(size, seed: Int(seed))
    }

    static func key(_ url: String) -> CacheKey { CacheKey(url: URL(string: url)!)! }
}

/// The body files under `directory` that hold an entry's body: those `stores` keep as spare
/// files (a removed entry's file, renamed, for the next body) left out.
func bodyFilesInUse(in directory: URL, besides stores: CacheStore...) -> [URL] {
    let spares = Set(stores.flatMap { $0.spareFileNames.map { URL(fileURLWithPath: $0).lastPathComponent } })
    return bodyFiles(in: directory).filter { !spares.contains($0.lastPathComponent) }
}
