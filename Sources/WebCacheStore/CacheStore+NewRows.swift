import GRDB
import GRDBSQLite

/// A new entry's row on its way into the index, with the mark of the exchange it came from.
struct NewRow: Sendable {
    var row: EntryRow
    var removalMark: RemovalMark?
}

extension CacheStore {
    /// The current ``RemovalMark``: take it before sending the request whose response may be
    /// stored, and give it with the entry (``NewEntry/removalMark``).
    public var removalMark: RemovalMark {
        removalFences.withLock { $0.mark }
    }

    /// Whether an entry for `key` (in `group`) whose request was sent at `mark` would be turned
    /// away now: an entry it covers was removed since (an unsafe request invalidated its URL).
    /// A cache asks before it lets a later request share such a response.
    public func removedMeanwhile(_ key: CacheKey, group: String? = nil, since mark: RemovalMark) -> Bool {
        removalFences.withLock { $0.removed(url: key.url, host: key.host, group: group, since: mark) }
    }

    /// ``writeRows(_:)`` for rows from ``GroupCommit``, except those an entry removed since their
    /// exchange began covers (``RemovalMark``): they fail with
    /// `StoreError.Code.removedMeanwhile`, and the rest are written.
    func writeNewRows(_ rows: [NewRow]) -> [Result<Int64, any Error>] {
        let removed = removalFences.withLock { fences in
            rows.map { new in
                new.removalMark.map {
                    fences.removed(url: new.row.url, host: new.row.host, group: new.row.groupName, since: $0)
                } ?? false
            }
        }
        guard removed.contains(true) else { return writeRows(rows.map(\.row)) }
        var written = writeRows(zip(rows, removed).filter { !$0.1 }.map(\.0.row)).makeIterator()
        return zip(rows, removed).map { new, removed in
            guard removed else { return written.next() ?? .failure(StoreError.missingWriterResult) }
            return .failure(
                StoreError(
                    .removedMeanwhile,
                    "not storing \(new.row.url): an entry for it was removed after its request was sent"))
        }
    }

    /// Writes new entries' rows in one transaction: each replaces the row with the same key and
    /// variant, pending access times go in first, and eviction runs once at the end. Returns
    /// each row's id, in order. When the transaction fails, the rows are tried one by one, so
    /// that one that cannot be written fails only itself.
    func writeRows(_ rows: [EntryRow]) -> [Result<Int64, any Error>] {
        guard !rows.isEmpty else { return [] }
        configuration.beforeWritingRows?(rows.map(\.url))
        let pending = drainAccesses()
        do {
            let (ids, removed) = try database(rows.count == 1 ? "store \(rows[0].url)" : "store \(rows.count) entries")
            {
                try pool.write { db -> ([Int64], [RemovedRow]) in
                    try AccessLog.apply(pending, in: db)
                    try HeadRefreshes.apply(headRefreshes.drain(), in: db)
                    var ids: [Int64] = []
                    var removed: [RemovedRow] = []
                    ids.reserveCapacity(rows.count)
                    try Self.countInUsage(rows, in: db)
                    for row in rows {
                        removed += try replaceRow(row, in: db)
                        ids.append(db.lastInsertedRowID)
                    }
                    removed += try evictLeastRecentlyUsed(
                        in: db, atMost: max(Self.evictionsPerTransaction, 2 * rows.count))
                    return (ids, removed)
                }
            }
            finishRemoval(
                removed, alsoInvalidating: rows.map { CacheKey(storedMethod: $0.method, url: $0.url, host: $0.host) })
            return ids.map { .success($0) }
        } catch {
            guard rows.count > 1 else { return [.failure(error)] }
            return rows.flatMap { writeRows([$0]) }
        }
    }

    /// Inside a write transaction, before `rows` are inserted: adds them to their namespaces'
    /// `usage`, one statement per namespace rather than the trigger's upsert per row (their
    /// inserts say so, `countedByWriter`). Counted first, so that a row of the batch replacing
    /// an earlier one of the same batch takes away from a total that has it already.
    private static func countInUsage(_ rows: [EntryRow], in db: Database) throws {
        var totals: [String: (entries: Int64, bytes: Int64)] = [:]
        for row in rows {
            totals[row.namespace, default: (0, 0)].entries += 1
            totals[row.namespace, default: (0, 0)].bytes += Int64(row.bodySize)
        }
        for (namespace, total) in totals {
            try db.cachedStatement(sql: countedSQL).execute(arguments: [namespace, total.entries, total.bytes])
        }
    }

    private static let countedSQL = """
        INSERT INTO usage(namespace, entries, bytes) VALUES (?, ?, ?)
        ON CONFLICT(namespace) DO UPDATE SET entries = entries + excluded.entries, bytes = bytes + excluded.bytes
        """

    /// Inside a write transaction: deletes the row with the same key and variant as `row`, and
    /// the least recently used unpinned other variants past ``Configuration/maximumVariants``
    /// less one, and inserts `row` (its id is then the connection's last inserted row id).
    /// Returns what went.
    ///
    /// Both statements are GRDB's cached ones on its writer connection, bound and stepped
    /// through SQLite's C interface (``SQLiteBinding``): every stored entry runs them. The first
    /// reads every variant of the key (nearly always none or one) through the key's unique index.
    private func replaceRow(_ row: EntryRow, in db: Database) throws -> [RemovedRow] {
        // The statements are held while their SQLite handles are in use: GRDB's cache owns them
        // and finalizes them when it lets go.
        let variants = try db.cachedStatement(sql: Self.variantsSQL)
        let removed = try withExtendedLifetime(variants) { () throws -> [RemovedRow] in
            let handle = variants.sqliteStatement
            defer { SQLiteBinding.reset(handle) }
            try SQLiteBinding.bind(namespace, at: 1, in: handle)
            try SQLiteBinding.bind(row.method, at: 2, in: handle)
            try SQLiteBinding.bind(row.url, at: 3, in: handle)
            var removed: [RemovedRow] = []
            var others: [(row: RemovedRow, lastAccess: Double)] = []
            while try Self.step(handle, db, doing: "find the stored variants of \(row.url)") {
                let found = RemovedRow(statement: handle)
                if SQLiteColumn.text(handle, 5) == row.varyKey {
                    removed.append(found)
                } else if sqlite3_column_int64(handle, 7) == 0 {
                    others.append((found, sqlite3_column_double(handle, 6)))
                }
            }
            let excess = others.count - (configuration.maximumVariants - 1)
            if excess > 0 {
                others.sort { ($0.lastAccess, $0.row.id) < ($1.lastAccess, $1.row.id) }
                removed += others.prefix(excess).map(\.row)
            }
            return removed
        }
        if !removed.isEmpty { try UsageAccounting.deleteEntries(removed.map(\.id), in: db) }
        let insert = try db.cachedStatement(sql: Self.insertSQL)
        try withExtendedLifetime(insert) {
            let handle = insert.sqliteStatement
            defer { SQLiteBinding.reset(handle) }
            try bindForInsert(row, to: handle)
            _ = try Self.step(handle, db, doing: "store \(row.url)")
        }
        return removed
    }

    /// Binds every column of `row` but the id, in ``insertSQL``'s order.
    private func bindForInsert(_ row: EntryRow, to insert: OpaquePointer) throws(SQLiteFailure) {
        try SQLiteBinding.bind(row.namespace, at: 1, in: insert)
        try SQLiteBinding.bind(row.method, at: 2, in: insert)
        try SQLiteBinding.bind(row.url, at: 3, in: insert)
        try SQLiteBinding.bind(row.host, at: 4, in: insert)
        try SQLiteBinding.bind(row.varyKey, at: 5, in: insert)
        try SQLiteBinding.bind(Int64(row.status), at: 6, in: insert)
        try SQLiteBinding.bind(row.requestHeaders, at: 7, in: insert)
        try SQLiteBinding.bind(row.responseHeaders, at: 8, in: insert)
        try SQLiteBinding.bind(row.requestTime, at: 9, in: insert)
        try SQLiteBinding.bind(row.responseTime, at: 10, in: insert)
        try SQLiteBinding.bind(row.lastAccess, at: 11, in: insert)
        try SQLiteBinding.bind(Int64(row.bodySize), at: 12, in: insert)
        try SQLiteBinding.bind(row.bodyChecksum, at: 13, in: insert)
        try SQLiteBinding.bind(row.bodyFile, at: 14, in: insert)
        try SQLiteBinding.bind(row.bodyInline, at: 15, in: insert)
        try SQLiteBinding.bind(row.appExpiry, at: 16, in: insert)
        try SQLiteBinding.bind(row.discardAfter, at: 17, in: insert)
        try SQLiteBinding.bind(row.groupName, at: 18, in: insert)
        try SQLiteBinding.bind(row.pinned ? 1 : 0, at: 19, in: insert)
    }

    /// Steps `statement` once: `true` on a row, `false` when done; SQLite's error as GRDB's
    /// `DatabaseError` otherwise, so that the transaction rolls back as for any other failure.
    private static func step(_ statement: OpaquePointer, _ db: Database, doing what: @autoclosure () -> String) throws
        -> Bool
    {
        let stepped = sqlite3_step(statement)
        switch stepped {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            throw DatabaseError(
                resultCode: ResultCode(rawValue: stepped),
                message: "could not \(what()): \(String(cString: sqlite3_errmsg(db.sqliteConnection)))")
        }
    }

    /// Every variant of a key: ``RemovedRow/columns``, then `varyKey`, `lastAccess` and `pinned`.
    private static let variantsSQL =
        "SELECT \(RemovedRow.columns), varyKey, lastAccess, pinned FROM entry WHERE namespace = ? AND method = ? AND url = ?"

    /// A prepared insert of every column but the id, in ``EntryRow``'s order, of a row already
    /// counted in `usage` (``countInUsage(_:in:)``).
    private static let insertSQL = """
        INSERT INTO entry (namespace, method, url, host, varyKey, status, requestHeaders, responseHeaders, requestTime, \
        responseTime, lastAccess, bodySize, bodyChecksum, bodyFile, bodyInline, appExpiry, discardAfter, groupName, pinned, \
        countedByWriter) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
        """
}

extension RemovedRow {
    /// The row `statement` is on, its columns in the order of ``columns``.
    fileprivate init(statement: OpaquePointer) {
        self.init(
            id: sqlite3_column_int64(statement, 0), method: SQLiteColumn.text(statement, 1) ?? "",
            url: SQLiteColumn.text(statement, 2) ?? "", host: SQLiteColumn.text(statement, 3) ?? "",
            bodyFile: SQLiteColumn.text(statement, 4))
    }
}
