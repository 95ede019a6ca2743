import GRDB

extension CacheStore {
    /// Evicts least-recently-used unpinned entries if the namespace holds more than
    /// ``Configuration/diskCapacity`` bytes, down to ``Configuration/trimRatio`` of it in one
    /// pass. Returns how many entries went. Runs by itself after every store.
    @discardableResult
    public func trim() throws -> Int {
        let pending = drainAccesses()
        let removed = try database("trim the cache") {
            try pool.write { db -> [RemovedRow] in
                try AccessLog.apply(pending, in: db)
                return try evictLeastRecentlyUsed(in: db)
            }
        }
        finishRemoval(removed, alsoInvalidating: [])
        return removed.count
    }

    /// The SQL condition for an entry no page manifest holds (held entries are pinned too).
    static let notInManifest =
        "NOT EXISTS (SELECT 1 FROM manifestMember m WHERE m.namespace = entry.namespace AND m.url = entry.url)"

    /// Inside a write transaction: deletes the oldest unpinned rows until the namespace is back
    /// under its trim target, and returns them (their files are deleted after the commit).
    func evictLeastRecentlyUsed(in db: Database) throws -> [RemovedRow] {
        let bytes =
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT bytes FROM usage WHERE namespace = ?"), arguments: [namespace]) ?? 0
        guard bytes > configuration.diskCapacity else { return [] }
        var excess = bytes - Int(Double(configuration.diskCapacity) * configuration.trimRatio)
        var victims: [RemovedRow] = []
        let cursor = try Row.fetchCursor(
            db,
            sql:
                "SELECT \(RemovedRow.columns), bodySize FROM entry WHERE namespace = ? AND pinned = 0 AND \(Self.notInManifest) ORDER BY lastAccess",
            arguments: [namespace])
        while excess > 0, let row = try cursor.next() {
            victims.append(
                RemovedRow(
                    id: row["id"], method: row["method"], url: row["url"], host: row["host"], bodyFile: row["bodyFile"])
            )
            excess -= row["bodySize"] as Int
        }
        for chunk in victims.map(\.id).chunked(into: 500) {
            try db.execute(sql: "DELETE FROM entry WHERE id IN (\(chunk.map(String.init).joined(separator: ",")))")
        }
        if !victims.isEmpty {
            logger.debug("evicted \(victims.count) entries to stay under \(configuration.diskCapacity) bytes")
        }
        return victims
    }
}
