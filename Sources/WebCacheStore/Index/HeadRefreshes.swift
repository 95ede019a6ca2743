import Dispatch
import GRDB
import HTTPCaching

/// Refreshed heads (a 304's, RFC 9111 §4.3.4) of entries refreshed again and again: a page sent
/// `no-cache` is revalidated on every request, and writing its head each time cost a write
/// transaction on the caller's thread (and now and then a checkpoint) per request.
///
/// An entry's head goes to the index at most once per ``interval``. A refresh within it, of an
/// entry the memory tier holds (so that lookups in this process see it at once), is kept here
/// instead; the latest one kept goes to the index with the entry's next refresh after the
/// interval, with the next new entries' transaction, with the next batch of access times, or
/// when the store is let go. A crash
/// loses at most those: the index then has a head a little older, which costs at worst one more
/// validation.
final class HeadRefreshes: Sendable {
    /// A head waiting to be written.
    struct Pending: Sendable {
        var status: Int
        var headers: String
        var requestTime: Double
        var responseTime: Double
    }

    /// The least time between two writes of one entry's head, in nanoseconds.
    static let interval: UInt64 = 1_000_000_000
    /// Entries whose last write is remembered; the table starts again empty when full.
    static let remembered = 4096

    private struct State {
        var lastWritten: [Int64: UInt64] = [:]
        var pending: [Int64: Pending] = [:]
    }

    private let state = Locked(State())

    /// Keeps `head` for entry `id` rather than writing it, when the entry's head was written less
    /// than ``interval`` before `now` (nanoseconds of uptime); `false` when it is to be written now.
    func keep(_ head: Pending, of id: Int64, now: UInt64) -> Bool {
        state.withLock { state in
            guard let last = state.lastWritten[id], now >= last, now - last < Self.interval else { return false }
            state.pending[id] = head
            return true
        }
    }

    /// Notes that entry `id`'s head was written at `now`: what was kept for it is superseded.
    func wrote(_ id: Int64, at now: UInt64) {
        state.withLock { state in
            if state.lastWritten.count >= Self.remembered { state.lastWritten.removeAll(keepingCapacity: true) }
            state.lastWritten[id] = now
            state.pending[id] = nil
        }
    }

    /// The kept heads, no longer kept.
    func drain() -> [Int64: Pending] {
        state.withLock { state in
            defer { state.pending.removeAll(keepingCapacity: true) }
            return state.pending
        }
    }

    /// Writes `pending` inside the caller's write transaction (an entry removed since is skipped).
    static func apply(_ pending: [Int64: Pending], in db: Database) throws {
        guard !pending.isEmpty else { return }
        let update = try db.cachedStatement(sql: updateSQL)
        for (id, head) in pending {
            try update.execute(arguments: [head.status, head.headers, head.requestTime, head.responseTime, id])
        }
    }

    static let updateSQL =
        "UPDATE entry SET status = ?, responseHeaders = ?, requestTime = ?, responseTime = ? WHERE id = ?"

    /// Uptime in nanoseconds, the clock of ``interval``.
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }
}
