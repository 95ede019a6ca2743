import GRDB

extension CacheStore {
    /// Evicts least-recently-used unpinned entries if the namespace holds more than
    /// ``Configuration/diskCapacity`` bytes, down to ``Configuration/trimRatio`` of it in one
    /// pass. Returns how many entries went. Stores evict by themselves, at most 64 entries each.
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

    /// How many entries a transaction that stores new ones evicts on its way from the capacity
    /// down to the trim target (more when it stores more than half as many). Whatever takes the
    /// store back under ``Configuration/diskCapacity`` goes at once; the way on down to the
    /// target goes a batch per transaction, so the transactions the misses in flight wait for
    /// stay short, where one pass over a fifth of the capacity (thousands of entries, their files
    /// unlinked) held them for most of a second.
    package static let evictionsPerTransaction = 64

    /// Inside a write transaction: deletes the oldest unpinned rows until the namespace is back
    /// under its trim target — once under the capacity, at most `limit` of them, the rest in the
    /// transactions that follow (``evictionsPerTransaction``) — and returns them (their files are
    /// deleted after the commit).
    func evictLeastRecentlyUsed(in db: Database, atMost limit: Int = .max) throws -> [RemovedRow] {
        // Never below zero, whatever a damaged index says, so that nothing below overflows.
        let indexed = max(
            0,
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT bytes FROM usage WHERE namespace = ?"), arguments: [namespace]) ?? 0)
        // The bytes this process keeps in spare files count as used, and go before any entry:
        // entries are evicted for the index's own bytes, spare files deleted for the rest.
        // (Their files are deleted after the commit, with the evicted entries'.)
        let (sum, overflow) = indexed.addingReportingOverflow(spares.bytesHeld())
        if overflow || sum > configuration.diskCapacity {
            spares.shed(atLeast: overflow ? .max : sum - configuration.diskCapacity)
        }
        // The files removed from here on may keep what they leave free under the capacity.
        spares.room(configuration.diskCapacity - indexed)
        let target = configuration.trimTarget
        let trimming = self.trimming.withLock { trimming in
            if indexed > configuration.diskCapacity { trimming = true }
            if indexed <= target { trimming = false }
            return trimming
        }
        guard trimming else { return [] }
        let overCapacity = indexed - configuration.diskCapacity
        let excess = indexed - target
        var freed = 0
        var exhausted = false
        var victims: [RemovedRow] = []
        let cursor = try Row.fetchCursor(
            db,
            sql:
                "SELECT \(RemovedRow.columns), bodySize FROM entry WHERE namespace = ? AND pinned = 0 AND \(Self.notInManifest) ORDER BY lastAccess",
            arguments: [namespace])
        while freed < excess, victims.count < limit || freed < overCapacity {
            guard let row = try cursor.next() else {
                exhausted = true
                break
            }
            victims.append(
                RemovedRow(
                    id: row["id"], method: row["method"], url: row["url"], host: row["host"], bodyFile: row["bodyFile"])
            )
            // A damaged row's size may be anything: counted from 0 up to Int.max.
            let (sum, overflow) = freed.addingReportingOverflow(max(0, row["bodySize"] as Int))
            freed = overflow ? .max : sum
        }
        try UsageAccounting.deleteEntries(victims.map(\.id), in: db)
        if !victims.isEmpty {
            logger.debug("evicted \(victims.count) entries to stay under \(configuration.diskCapacity) bytes")
        }
        // Down to the target, or nothing evictable is left (pinned, in manifests): done until the
        // capacity is passed again.
        if freed >= excess || exhausted { self.trimming.withLock { $0 = false } }
        return victims
    }
}
