import GRDBSQLite
import HTTPCaching

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The index query a lookup that misses the memory tier makes — a key's rows — on connections of
/// its own, straight through SQLite's C interface.
///
/// Every other read goes through GRDB, and so does every write (the two statements each stored
/// entry runs only bind and step through the C interface, on GRDB's writer connection: see
/// `replaceRow` in `CacheStore+NewRows.swift`). This one is on the hit path of every entry
/// the memory tier does not hold, and of every miss, and there GRDB's connection pool cost more
/// than the query: a dispatch queue entered twice, a lock, a semaphore, a schema check and a
/// dictionary of column names for each row (measured: 17 % of the proxy's time with 50,000 hot
/// entries and no memory tier). Here a lookup takes an idle connection under a lock (opening one
/// when none is idle), runs its prepared statement, and puts the connection back.
///
/// The connections see what GRDB's writer commits like any reader in WAL mode: one statement is
/// one consistent snapshot. They only ever read (`PRAGMA query_only`).
final class EntryLookup: Sendable {
    /// One connection with its prepared statement; used by one thread at a time.
    private final class Connection: @unchecked Sendable {
        let handle: OpaquePointer
        let statement: OpaquePointer

        init(path: String, sql: String) throws(SQLiteFailure) {
            var handle: OpaquePointer?
            let opened = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
            guard opened == SQLITE_OK, let handle else {
                let failure = SQLiteFailure(code: opened, handle: handle, doing: "open \(path)")
                sqlite3_close_v2(handle)
                throw failure
            }
            sqlite3_busy_timeout(handle, 10_000)
            var statement: OpaquePointer?
            let prepared = sqlite3_exec(handle, "PRAGMA query_only = ON", nil, nil, nil)
            let compiled =
                prepared == SQLITE_OK
                ? sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) : prepared
            guard compiled == SQLITE_OK, let statement else {
                let failure = SQLiteFailure(code: compiled, handle: handle, doing: "prepare the lookup")
                sqlite3_close_v2(handle)
                throw failure
            }
            self.handle = handle
            self.statement = statement
        }

        deinit {
            sqlite3_finalize(statement)
            sqlite3_close_v2(handle)
        }
    }

    /// Connections kept open while idle; more are opened when lookups run in parallel, and
    /// closed again once they are done.
    static let idleConnectionsKept = 8

    private let path: String
    private let sql = "SELECT \(EntryRow.selection) FROM entry WHERE namespace = ? AND method = ? AND url = ?"
    private let idle = Locked(Idle())

    /// The connections kept, and how many lookups were made (counted where a connection is
    /// taken, under the lock taken for it anyway).
    private struct Idle {
        var connections: [Connection] = []
        var lookups = 0
    }

    /// How many lookups were made (for tests: how often a request reached the index).
    var lookupsMade: Int { idle.withLock { $0.lookups } }

    /// Lookups on the index at `path` (which must exist, its schema in place).
    init(path: String) {
        self.path = path
    }

    /// The rows stored for `method` and `url` in `namespace`.
    func rows(namespace: String, method: String, url: String) throws(SQLiteFailure) -> [EntryRow] {
        let connection: Connection
        let taken = idle.withLock { idle in
            idle.lookups += 1
            return idle.connections.popLast()
        }
        if let kept = taken {
            connection = kept
        } else {
            connection = try Connection(path: path, sql: sql)
        }
        let statement = connection.statement
        // A failure here, as in a step, drops the connection rather than keeping it.
        try SQLiteBinding.bind(namespace, at: 1, in: statement)
        try SQLiteBinding.bind(method, at: 2, in: statement)
        try SQLiteBinding.bind(url, at: 3, in: statement)
        var rows: [EntryRow] = []
        while true {
            let stepped = sqlite3_step(statement)
            if stepped == SQLITE_DONE { break }
            guard stepped == SQLITE_ROW else {
                // The connection is closed, not kept: it may be what failed.
                throw SQLiteFailure(code: stepped, handle: connection.handle, doing: "look up \(url)")
            }
            rows.append(EntryRow(statement: statement))
        }
        // Reset before it is kept: once kept, another thread may take it.
        SQLiteBinding.reset(statement)
        idle.withLock { idle in
            if idle.connections.count < Self.idleConnectionsKept { idle.connections.append(connection) }
        }
        return rows
    }
}

/// An error code from SQLite with its message, for a ``StoreError``'s cause.
struct SQLiteFailure: Error, CustomStringConvertible {
    /// SQLite's result code.
    let code: Int32
    let message: String

    init(code: Int32, handle: OpaquePointer?, doing what: String) {
        self.code = code
        let detail =
            handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        self.message = "could not \(what): SQLite error \(code): \(detail)"
    }

    var description: String { message }
}

extension EntryRow {
    /// The row `statement` is on, its columns in the order of ``selection``.
    fileprivate init(statement: OpaquePointer) {
        self.init(
            id: sqlite3_column_int64(statement, 0),
            namespace: SQLiteColumn.text(statement, 1) ?? "",
            method: SQLiteColumn.text(statement, 2) ?? "",
            url: SQLiteColumn.text(statement, 3) ?? "",
            host: SQLiteColumn.text(statement, 4) ?? "",
            varyKey: SQLiteColumn.text(statement, 5) ?? "",
            status: Int(sqlite3_column_int64(statement, 6)),
            requestHeaders: SQLiteColumn.text(statement, 7) ?? "",
            responseHeaders: SQLiteColumn.text(statement, 8) ?? "",
            requestTime: sqlite3_column_double(statement, 9),
            responseTime: sqlite3_column_double(statement, 10),
            lastAccess: sqlite3_column_double(statement, 11),
            bodySize: Int(sqlite3_column_int64(statement, 12)),
            bodyChecksum: sqlite3_column_int64(statement, 13),
            bodyFile: SQLiteColumn.text(statement, 14),
            bodyInline: SQLiteColumn.blob(statement, 15),
            appExpiry: SQLiteColumn.double(statement, 16),
            discardAfter: SQLiteColumn.double(statement, 17),
            groupName: SQLiteColumn.text(statement, 18),
            pinned: sqlite3_column_int64(statement, 19) != 0)
    }
}
