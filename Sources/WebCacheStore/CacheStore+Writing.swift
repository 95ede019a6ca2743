import GRDB
import HTTPCaching
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheStore {
    /// A writer that streams the body of `entry` into the store; see ``BodyWriter``.
    ///
    /// Only the request fields that the response's `Vary` names are kept with the entry (never
    /// `Authorization` or cookies unless the response varies on them).
    public func makeWriter(for entry: NewEntry) throws -> BodyWriter {
        guard let key = CacheKey(request: entry.stored.request) else {
            throw StoreError(.invalidConfiguration, "cannot store a response for a request without an absolute URL")
        }
        let specifier = VarySpecifier(entry.stored.response.headerFields)
        var trimmed = entry
        trimmed.stored.request.headerFields = entry.stored.request.headerFields.filter { specifier.names.contains($0.name) }
            .reduce(into: HTTPFields()) { $0.append($1) }
        return BodyWriter(store: self, entry: trimmed, key: key, varyKey: VaryKey(specifier, request: entry.stored.request.headerFields).text)
    }

    /// Stores a response with a body already in memory; `nil` when the body is larger than the
    /// maximum entry size (then nothing is stored).
    @discardableResult
    public func store(_ entry: NewEntry, body: Data) throws -> CacheEntry? {
        let writer = try makeWriter(for: entry)
        try writer.write(body)
        return try writer.commit()
    }

    /// Stores many small responses in one transaction (e.g. the resources of a preloaded page).
    /// Bodies over ``Configuration/inlineBodyLimit`` go through ``makeWriter(for:)`` one by one;
    /// bodies over the maximum entry size are skipped. Returns the entries stored.
    @discardableResult
    public func storeBatch(_ items: [(entry: NewEntry, body: Data)]) throws -> [CacheEntry] {
        var stored: [CacheEntry] = []
        var inline: [(NewEntry, CacheKey, String, Data)] = []
        for (entry, body) in items where body.count <= configuration.maximumEntrySize {
            if body.count > configuration.inlineBodyLimit {
                if let result = try store(entry, body: body) { stored.append(result) }
                continue
            }
            let writer = try makeWriter(for: entry)
            inline.append((writer.entry, writer.key, writer.varyKey, body))
            writer.cancel()
        }
        let now = configuration.now()
        let pending = drainAccesses()
        let (rows, removed) = try database("store \(inline.count) entries") {
            try pool.write { db -> ([EntryRow], [RemovedRow]) in
                try AccessLog.apply(pending, in: db)
                var rows: [EntryRow] = []
                var removed: [RemovedRow] = []
                for (entry, key, varyKey, body) in inline {
                    removed += try replaceRow(
                        makeRow(entry, key: key, varyKey: varyKey, body: .data(body), size: body.count, now: now), into: db, rows: &rows)
                }
                removed += try evictLeastRecentlyUsed(in: db)
                return (rows, removed)
            }
        }
        finishRemoval(removed, alsoInvalidating: inline.map(\.1))
        for (row, item) in zip(rows, inline) {
            if let id = row.id {
                stored.append(CacheEntry(
                    id: id, key: item.1, varyKey: item.2, stored: item.0.stored, bodySize: item.3.count, lastAccess: now,
                    appExpiry: item.0.appExpiry, discardAfter: item.0.discardAfter, group: item.0.group,
                    isPinned: item.0.isPinned, body: .data(item.3)))
            }
        }
        return stored
    }

    /// Replaces the head and exchange times of a stored entry, e.g. after a 304 (RFC 9111 §4.3.4);
    /// the body stays.
    @discardableResult
    public func updateHead(of entry: CacheEntry, with stored: StoredResponse) throws -> CacheEntry {
        let headers = HeaderCoding.encode(stored.response.headerFields)
        let changed = try database("update the stored head of \(entry.key)") {
            try pool.write { db in
                try db.execute(
                    sql: """
                        UPDATE entry SET status = ?, responseHeaders = ?, requestTime = ?, responseTime = ?
                        WHERE id = ?
                        """,
                    arguments: [
                        stored.response.status.code, headers, stored.requestTime.timeIntervalSince1970,
                        stored.responseTime.timeIntervalSince1970, entry.id,
                    ])
                return db.changesCount
            }
        }
        memory.invalidate([entry.key])
        guard changed > 0 else { throw StoreError(.corruptBody, "the entry for \(entry.key) was removed meanwhile") }
        var updated = entry
        updated.stored.response = stored.response
        updated.stored.requestTime = stored.requestTime
        updated.stored.responseTime = stored.responseTime
        return updated
    }

    /// Records a finished body in the index (called by ``BodyWriter/commit()``), replacing the
    /// entry with the same key and variant, then evicts if the store is over capacity — all in
    /// one transaction.
    func insert(_ new: NewEntry, key: CacheKey, varyKey: String, body: BodyLocation, size: Int) throws -> CacheEntry {
        let now = configuration.now()
        let row = makeRow(new, key: key, varyKey: varyKey, body: body, size: size, now: now)
        let pending = drainAccesses()
        let (inserted, removed) = try database("store \(key)") {
            try pool.write { db -> (EntryRow, [RemovedRow]) in
                try AccessLog.apply(pending, in: db)
                var rows: [EntryRow] = []
                var removed = try replaceRow(row, into: db, rows: &rows)
                removed += try evictLeastRecentlyUsed(in: db)
                return (rows[0], removed)
            }
        }
        finishRemoval(removed, alsoInvalidating: [key])
        guard let id = inserted.id else { throw StoreError(.databaseFailure, "the index did not return an id for \(key)") }
        if case .file = body { verifiedBodies.withLock { _ = $0.insert(id) } }
        return CacheEntry(
            id: id, key: key, varyKey: varyKey, stored: new.stored, bodySize: size, lastAccess: now,
            appExpiry: new.appExpiry, discardAfter: new.discardAfter, group: new.group, isPinned: new.isPinned, body: body)
    }

    /// Inside a write transaction: deletes the row with the same key and variant, inserts `row`.
    private func replaceRow(_ row: EntryRow, into db: Database, rows: inout [EntryRow]) throws -> [RemovedRow] {
        var row = row
        let removed = try RemovedRow.fetchAll(
            db, sql: "SELECT \(RemovedRow.columns) FROM entry WHERE namespace = ? AND method = ? AND url = ? AND varyKey = ?",
            arguments: [namespace, row.method, row.url, row.varyKey])
        if !removed.isEmpty {
            try db.execute(sql: "DELETE FROM entry WHERE id IN (\(removed.map { String($0.id) }.joined(separator: ",")))")
        }
        try row.insert(db)
        rows.append(row)
        return removed
    }

    private func makeRow(_ new: NewEntry, key: CacheKey, varyKey: String, body: BodyLocation, size: Int, now: Date) -> EntryRow {
        let stored = new.stored
        var row = EntryRow(
            id: nil, namespace: namespace, method: key.method, url: key.url, host: key.host, varyKey: varyKey,
            status: stored.response.status.code,
            requestHeaders: HeaderCoding.encode(stored.request.headerFields),
            responseHeaders: HeaderCoding.encode(stored.response.headerFields),
            requestTime: stored.requestTime.timeIntervalSince1970, responseTime: stored.responseTime.timeIntervalSince1970,
            lastAccess: now.timeIntervalSince1970, bodySize: size, bodyChecksum: 0, bodyFile: nil, bodyInline: nil,
            appExpiry: new.appExpiry?.timeIntervalSince1970, discardAfter: new.discardAfter?.timeIntervalSince1970,
            groupName: new.group, pinned: new.isPinned)
        switch body {
        case .data(let data): row.bodyInline = data
        case .file(let name, let checksum), .fileInMemory(let name, let checksum, _):
            row.bodyFile = name
            row.bodyChecksum = Int64(checksum)
        case .inlineUnloaded: preconditionFailure("a new body is never unloaded")
        }
        return row
    }
}
