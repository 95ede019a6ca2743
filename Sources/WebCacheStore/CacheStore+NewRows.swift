import GRDB

extension CacheStore {
    /// Writes new entries' rows in one transaction: each replaces the row with the same key and
    /// variant, pending access times go in first, and eviction runs once at the end. Returns
    /// each row's id, in order. When the transaction fails, the rows are tried one by one, so
    /// that one that cannot be written fails only itself.
    func writeRows(_ rows: [EntryRow]) -> [Result<Int64, any Error>] {
        guard !rows.isEmpty else { return [] }
        let pending = drainAccesses()
        do {
            let (ids, removed) = try database(rows.count == 1 ? "store \(rows[0].url)" : "store \(rows.count) entries")
            {
                try pool.write { db -> ([Int64], [RemovedRow]) in
                    try AccessLog.apply(pending, in: db)
                    var ids: [Int64] = []
                    var removed: [RemovedRow] = []
                    ids.reserveCapacity(rows.count)
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

    /// Inside a write transaction: deletes the row with the same key and variant as `row` and
    /// inserts `row` (its id is then the connection's last inserted row id). Returns what went.
    private func replaceRow(_ row: EntryRow, in db: Database) throws -> [RemovedRow] {
        let sameVariant = try db.cachedStatement(
            sql:
                "SELECT \(RemovedRow.columns) FROM entry WHERE namespace = ? AND method = ? AND url = ? AND varyKey = ?"
        )
        let removed = try RemovedRow.fetchAll(sameVariant, arguments: [namespace, row.method, row.url, row.varyKey])
        if !removed.isEmpty {
            try db.execute(
                sql: "DELETE FROM entry WHERE id IN (\(removed.map { String($0.id) }.joined(separator: ",")))")
        }
        let insert = try db.cachedStatement(sql: Self.insertSQL)
        try insert.execute(arguments: [
            row.namespace, row.method, row.url, row.host, row.varyKey, row.status, row.requestHeaders,
            row.responseHeaders,
            row.requestTime, row.responseTime, row.lastAccess, row.bodySize, row.bodyChecksum, row.bodyFile,
            row.bodyInline,
            row.appExpiry, row.discardAfter, row.groupName, row.pinned,
        ])
        return removed
    }

    /// A prepared insert of every column but the id, in ``EntryRow``'s order (cheaper than the
    /// record's generic encoding, which a miss pays for every stored entry).
    private static let insertSQL = """
        INSERT INTO entry (namespace, method, url, host, varyKey, status, requestHeaders, responseHeaders, requestTime, \
        responseTime, lastAccess, bodySize, bodyChecksum, bodyFile, bodyInline, appExpiry, discardAfter, groupName, pinned) \
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
}
