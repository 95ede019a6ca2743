import HTTPCaching
import WebCacheStore

/// The ``HTTPCaching/StoredFacts`` of recently served entries, so that a hit does not parse the
/// stored head again.
///
/// Keyed by entry, and checked against the entry's exchange times: an entry refreshed by a 304
/// (new times) or a new entry that happens to reuse an identity gets new facts. When full, the
/// table starts again empty, which costs one parse per entry served next.
final class StoredFactsMemo: Sendable {
    private struct Item {
        var requestTime: Double
        var responseTime: Double
        var facts: StoredFacts
    }

    static let capacity = 8192
    private let items = Locked([Int64: Item]())

    /// The facts of `entry`'s stored response under `rules`, worked out at most once.
    func facts(of entry: CacheEntry, rules: CacheRules) -> StoredFacts {
        let requestTime = entry.stored.requestTime.timeIntervalSince1970
        let responseTime = entry.stored.responseTime.timeIntervalSince1970
        if let item = items.withLock({ $0[entry.id] }), item.requestTime == requestTime, item.responseTime == responseTime {
            return item.facts
        }
        let facts = rules.facts(of: entry.stored)
        items.withLock { items in
            if items.count >= Self.capacity { items.removeAll(keepingCapacity: true) }
            items[entry.id] = Item(requestTime: requestTime, responseTime: responseTime, facts: facts)
        }
        return facts
    }
}
