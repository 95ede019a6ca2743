import HTTPCaching
import HTTPTypes
import WebCacheStore

/// The ``HTTPCaching/StoredFacts`` of recently served entries, so that a hit does not parse the
/// stored head again.
///
/// Keyed by entry, and checked against the entry's exchange times: an entry refreshed by a 304
/// (new times) or a new entry that happens to reuse an identity gets new facts. When full, the
/// oldest facts make room for each new entry's (``HTTPCaching/BoundedTable``).
final class EntryFactsCache: Sendable {
    /// A class, so that taking one out of the table costs one retain, not one per field.
    private final class Item: Sendable {
        let requestTime: Double
        let responseTime: Double
        let facts: StoredFacts
        /// The head a fresh answer starts from (``servingHead(of:rules:)``), once asked for.
        let servingHead: ServingHead?

        init(requestTime: Double, responseTime: Double, facts: StoredFacts, servingHead: ServingHead? = nil) {
            self.requestTime = requestTime
            self.responseTime = responseTime
            self.facts = facts
            self.servingHead = servingHead
        }
    }

    /// The stored head as it is served: hop-by-hop fields removed, `Accept-Ranges: bytes` added
    /// to a 200 or 206 without it, and an `Age` field at `agePosition` whose value each answer
    /// sets (RFC 9111 §4, §5.1).
    struct ServingHead: Sendable {
        var response: HTTPResponse
        var agePosition: Int
    }

    static let capacity = 8192
    private let items = Locked(BoundedTable<Int64, Item>(capacity: EntryFactsCache.capacity))

    /// The facts of `entry`'s stored response under `rules`, worked out at most once.
    func facts(of entry: CacheEntry, rules: CacheRules) -> StoredFacts {
        item(of: entry, rules: rules).facts
    }

    /// The head a fresh answer from `entry` starts from, worked out at most once per entry:
    /// `rules.headForServing(_:age:)` with `Accept-Ranges` for a 200 or 206, the age to be set.
    func servingHead(of entry: CacheEntry, rules: CacheRules) -> ServingHead {
        let item = item(of: entry, rules: rules)
        if let head = item.servingHead { return head }
        var response = rules.headForServing(entry.stored, age: 0)
        if response.status.code == 200 || response.status.code == 206, !response.headerFields.contains(.acceptRanges) {
            response.headerFields[.acceptRanges] = "bytes"
        }
        // headForServing always writes an Age; should it ever not, one is added at the end.
        if !response.headerFields.contains(.age) { response.headerFields.append(HTTPField(name: .age, value: "0")) }
        let agePosition = response.headerFields.firstIndex { $0.name == .age } ?? response.headerFields.count - 1
        let head = ServingHead(response: response, agePosition: agePosition)
        let withHead = Item(
            requestTime: item.requestTime, responseTime: item.responseTime, facts: item.facts, servingHead: head)
        items.withLock { $0[entry.id] = withHead }
        return head
    }

    /// The item kept for `entry`, made (and kept) when there is none for its exchange times.
    private func item(of entry: CacheEntry, rules: CacheRules) -> Item {
        let requestTime = entry.stored.requestTime.timeIntervalSince1970
        let responseTime = entry.stored.responseTime.timeIntervalSince1970
        if let item = items.withLock({ $0[entry.id] }), item.requestTime == requestTime,
            item.responseTime == responseTime
        {
            return item
        }
        let item = Item(requestTime: requestTime, responseTime: responseTime, facts: rules.facts(of: entry.stored))
        items.withLock { $0[entry.id] = item }
        return item
    }
}
