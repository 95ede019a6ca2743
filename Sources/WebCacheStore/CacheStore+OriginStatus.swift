import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An origin (scheme, host and port) that could not be reached, as the store remembers it, so
/// that other processes on the same cache (`webcache stats`, `explain`, the next `get`) see it.
public struct OriginStatus: Sendable, Hashable {
    /// The origin, `scheme://host:port`.
    public var origin: String
    /// Connection attempts that failed in a row.
    public var failures: Int
    /// When the first of them failed.
    public var unreachableSince: Date
    /// Until when requests skip the connection attempt.
    public var retryAfter: Date
    /// What the last attempt ran into.
    public var lastError: String

    /// Describes an unreachable origin.
    public init(origin: String, failures: Int, unreachableSince: Date, retryAfter: Date, lastError: String) {
        self.origin = origin
        self.failures = failures
        self.unreachableSince = unreachableSince
        self.retryAfter = retryAfter
        self.lastError = lastError
    }
}

extension CacheStore {
    /// Records that `status.origin` is unreachable, replacing what was recorded for it.
    public func saveOriginStatus(_ status: OriginStatus) throws {
        try database("record that \(status.origin) is unreachable") {
            try pool.write { db in
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO originStatus(namespace, origin, failures, unreachableSince, retryAfter, lastError)
                        VALUES (?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        namespace, status.origin, max(1, status.failures),
                        status.unreachableSince.timeIntervalSince1970,
                        status.retryAfter.timeIntervalSince1970, status.lastError,
                    ])
            }
        }
    }

    /// Forgets that `origin` was unreachable (it answered again).
    public func removeOriginStatus(_ origin: String) throws {
        try database("record that \(origin) is reachable again") {
            try pool.write { db in
                try db.execute(
                    sql: "DELETE FROM originStatus WHERE namespace = ? AND origin = ?", arguments: [namespace, origin])
            }
        }
    }

    /// The origins recorded as unreachable, most recently failed first.
    public func originStatuses() throws -> [OriginStatus] {
        try database("read the unreachable origins") {
            try pool.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT * FROM originStatus WHERE namespace = ? ORDER BY retryAfter DESC, origin",
                    arguments: [namespace]
                ).map { row in
                    OriginStatus(
                        origin: try row.decode(forColumn: "origin"), failures: try row.decode(forColumn: "failures"),
                        unreachableSince: Date(timeIntervalSince1970: try row.decode(forColumn: "unreachableSince")),
                        retryAfter: Date(timeIntervalSince1970: try row.decode(forColumn: "retryAfter")),
                        lastError: try row.decode(forColumn: "lastError"))
                }
            }
        }
    }
}
