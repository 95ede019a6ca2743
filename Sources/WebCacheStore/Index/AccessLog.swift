import GRDB
import HTTPCaching

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Access times and sliding expiries waiting to be written: a hit costs a dictionary update,
/// and the index gets one batched write per ``flushThreshold`` distinct entries (made off the
/// caller's thread, see ``CacheStore/recordAccess(_:at:appExpiry:)``), or before eviction, stats
/// and close. A crash loses at most those pending updates, which only affect LRU order.
///
/// Access times are kept to the ``resolution``: a hit within it of the entry's last access
/// (when it was stored, or the last one recorded by this process) is not recorded again, so that an entry asked for many
/// times a second costs one row update a minute rather than one per hit — with thousands of
/// entries in use at once, per-hit updates kept a core busy with SQLite writes. A sliding
/// expiry is always recorded.
final class AccessLog: Sendable {
    struct Pending: Sendable {
        var lastAccess: Double
        var appExpiry: Double?
    }

    private struct State {
        var pending: [Int64: Pending] = [:]
        /// A flush is on its way: the next ones need not be asked for until it drains.
        var flushRequested = false
        /// The last access recorded per entry; emptied when it holds ``recentCapacity``.
        var lastRecorded: [Int64: Double] = [:]
    }

    static let flushThreshold = 128
    /// How precisely access times order entries for eviction, in seconds.
    static let resolution: Double = 60
    static let recentCapacity = 1 << 16
    private let state = Locked(State())

    /// Records an access; returns true when it is time to flush, once until the next ``drain()``.
    /// `known` is the access time the caller's copy of the entry has (when it was stored or
    /// read from the index).
    func record(id: Int64, at date: Date, known: Date, appExpiry: Date?) -> Bool {
        let time = date.timeIntervalSince1970
        return state.withLock { state in
            let last = max(state.lastRecorded[id] ?? 0, known.timeIntervalSince1970)
            if appExpiry == nil, time >= last, time - last < Self.resolution {
                return false
            }
            if state.lastRecorded.count >= Self.recentCapacity { state.lastRecorded.removeAll(keepingCapacity: true) }
            state.lastRecorded[id] = time
            var item = state.pending[id] ?? Pending(lastAccess: 0)
            item.lastAccess = max(item.lastAccess, time)
            if let appExpiry { item.appExpiry = appExpiry.timeIntervalSince1970 }
            state.pending[id] = item
            guard state.pending.count >= Self.flushThreshold, !state.flushRequested else { return false }
            state.flushRequested = true
            return true
        }
    }

    /// App-set expiries recorded but not yet written, by entry.
    func pendingExpiries(for ids: [Int64]) -> [Int64: Double] {
        state.withLock { state in
            var result: [Int64: Double] = [:]
            for id in ids { if let expiry = state.pending[id]?.appExpiry { result[id] = expiry } }
            return result
        }
    }

    /// Everything pending, now no longer pending.
    func drain() -> [Int64: Pending] {
        state.withLock { state in
            defer {
                state.pending.removeAll(keepingCapacity: true)
                state.flushRequested = false
            }
            return state.pending
        }
    }

    static func apply(_ pending: [Int64: Pending], in db: Database) throws {
        let touch = try db.cachedStatement(sql: "UPDATE entry SET lastAccess = max(lastAccess, ?) WHERE id = ?")
        let extend = try db.cachedStatement(
            sql: "UPDATE entry SET lastAccess = max(lastAccess, ?), appExpiry = ? WHERE id = ?")
        for (id, item) in pending {
            if let appExpiry = item.appExpiry {
                try extend.execute(arguments: [item.lastAccess, appExpiry, id])
            } else {
                try touch.execute(arguments: [item.lastAccess, id])
            }
        }
    }
}
