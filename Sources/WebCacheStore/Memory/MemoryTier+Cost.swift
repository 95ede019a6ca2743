import HTTPCaching
import HTTPTypes

extension MemoryTier {
    /// What a key's entries take on the heap, as the tier counts it against its capacity.
    ///
    /// An estimate, but one that grows with what is held: each header field is a few objects
    /// (its name, its value, a slot in the fields' array and in their index by name), the URL
    /// counts three times (the key's text and the request's own fields, with their allocations),
    /// and every object comes with the allocator's rounding. Calibrated on the proxy: with all
    /// 50,000 entries of a 419-byte stylesheet held, each took 2.7 KB of resident memory; such an
    /// entry (five response fields) counts 2.4–2.7 KB here, depending on its URL and request
    /// fields. A fixed 512 bytes per head, as counted before, let a 32 MiB tier take about 100 MiB.
    static func cost(of entries: [CacheEntry]) -> Int {
        entries.reduce(keyOverhead) { total, entry in
            total + cost(of: entry)
        }
    }

    /// The node, its slot in the table of keys, and the key's own text.
    private static let keyOverhead = 256

    /// The entry, its stored request and response, and the objects behind them.
    private static let entryOverhead = 640

    /// One header field: its name and value objects, its place in the array and in the index.
    private static let fieldOverhead = 96

    private static func cost(of entry: CacheEntry) -> Int {
        let stored = entry.stored
        var bytes = entryOverhead + 2 * entry.key.url.utf8.count + entry.key.host.utf8.count
        bytes += entry.varyKey.utf8.count + (entry.group?.utf8.count ?? 0)
        // The request's method, scheme, authority and path.
        bytes += 4 * fieldOverhead + entry.key.url.utf8.count
        bytes += cost(of: stored.request.headerFields) + cost(of: stored.response.headerFields)
        switch entry.body {
        case .data(let data), .fileInMemory(_, _, let data): bytes += data.count + 32
        case .file(let name, _): bytes += name.utf8.count
        case .inlineUnloaded: break
        }
        return bytes
    }

    private static func cost(of fields: HTTPFields) -> Int {
        fields.reduce(0) { total, field in
            total + fieldOverhead + field.name.rawName.utf8.count + field.value.utf8.count
        }
    }
}
