import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Access times and sliding expiries waiting to be written: a hit costs a dictionary update,
/// and the index gets one batched write per ``flushThreshold`` hits (or before eviction, stats
/// and close). A crash loses at most those pending updates, which only affect LRU order.
final class AccessLog: Sendable {
    struct Pending: Sendable {
        var lastAccess: Double
        var appExpiry: Double?
    }

    static let flushThreshold = 128
    private let pending = Locked([Int64: Pending]())

    /// Records an access; returns true when it is time to flush.
    func record(id: Int64, at date: Date, appExpiry: Date?) -> Bool {
        pending.withLock { pending in
            var item = pending[id] ?? Pending(lastAccess: 0)
            item.lastAccess = max(item.lastAccess, date.timeIntervalSince1970)
            if let appExpiry { item.appExpiry = appExpiry.timeIntervalSince1970 }
            pending[id] = item
            return pending.count >= Self.flushThreshold
        }
    }

    /// App-set expiries recorded but not yet written, by entry.
    func pendingExpiries(for ids: [Int64]) -> [Int64: Double] {
        pending.withLock { pending in
            var result: [Int64: Double] = [:]
            for id in ids { if let expiry = pending[id]?.appExpiry { result[id] = expiry } }
            return result
        }
    }

    func drain() -> [Int64: Pending] {
        pending.withLock { pending in
            defer { pending.removeAll(keepingCapacity: true) }
            return pending
        }
    }

    static func apply(_ pending: [Int64: Pending], in db: Database) throws {
        let touch = try db.cachedStatement(sql: "UPDATE entry SET lastAccess = max(lastAccess, ?) WHERE id = ?")
        let extend = try db.cachedStatement(sql: "UPDATE entry SET lastAccess = max(lastAccess, ?), appExpiry = ? WHERE id = ?")
        for (id, item) in pending {
            if let appExpiry = item.appExpiry {
                try extend.execute(arguments: [item.lastAccess, appExpiry, id])
            } else {
                try touch.execute(arguments: [item.lastAccess, id])
            }
        }
    }
}
