import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A row about to be removed: enough to delete its file and forget its key in memory.
struct RemovedRow: FetchableRecord, Decodable, Sendable {
    var id: Int64
    var method: String
    var url: String
    var host: String
    var bodyFile: String?

    /// The columns to select for it.
    static let columns = "id, method, url, host, bodyFile"

    var key: CacheKey { CacheKey(storedMethod: method, url: url, host: host) }
}

extension CacheStore {
    /// Removes one entry. Returns whether it was there.
    @discardableResult
    public func remove(_ entry: CacheEntry) throws -> Bool {
        try removeRows(ids: [entry.id]) > 0
    }

    /// Removes every variant stored for `key`. Like the other removals by key, URL, host or group,
    /// it first waits for the entries already on their way into the index (written in batches), so
    /// that an entry stored just before is removed too.
    @discardableResult
    public func remove(key: CacheKey) throws -> Int {
        try removeAfterEntriesOnTheirWay(
            .url(key.url), "method = ? AND url = ?", [key.method, key.url], what: "remove \(key)")
    }

    /// Removes every entry for `url`, whatever the method.
    @discardableResult
    public func remove(url: URL) throws -> Int {
        guard let key = CacheKey(url: url) else { return 0 }
        // Through the key's index, one stored method at a time: `url = ?` alone reads the
        // namespace's whole index (22 ms at 200,000 entries, against 34 µs), and an unsafe
        // request's invalidation runs this on its event loop.
        return try removeAfterEntriesOnTheirWay(
            .url(key.url), Self.urlCondition, [namespace, namespace, key.url], what: "remove \(key.url)")
    }

    /// The condition of ``remove(url:)``, bound to the namespace twice and then the URL.
    static let urlCondition = "method IN (\(storedMethods)) AND url = ?"

    /// The methods stored in a namespace (bound to it twice), each found by one seek in the
    /// key's index, as SQLite finds an index's distinct leading values only this way.
    private static let storedMethods = """
        WITH RECURSIVE stored(method) AS (
            SELECT min(method) FROM entry WHERE namespace = ?
            UNION ALL
            SELECT (SELECT min(method) FROM entry WHERE namespace = ? AND method > stored.method)
            FROM stored WHERE stored.method IS NOT NULL
        ) SELECT method FROM stored WHERE method IS NOT NULL
        """

    /// Removes every entry whose URL starts with `prefix` (e.g. `https://example.com/api/`).
    @discardableResult
    public func remove(urlPrefix prefix: String) throws -> Int {
        try removeAfterEntriesOnTheirWay(
            .urlPrefix(prefix), "substr(url, 1, length(?)) = ?", [prefix, prefix],
            what: "remove entries under \(prefix)")
    }

    /// Removes every entry for `host` (compared without case).
    @discardableResult
    public func remove(host: String) throws -> Int {
        try removeAfterEntriesOnTheirWay(
            .host(host.lowercased()), "host = ?", [host.lowercased()], what: "remove entries for \(host)")
    }

    /// Removes every entry of `group`, pinned or not.
    @discardableResult
    public func remove(group: String) throws -> Int {
        try removeAfterEntriesOnTheirWay(.group(group), "groupName = ?", [group], what: "remove group \(group)")
    }

    /// Removes unpinned entries (outside every page manifest) that are useless even as stale responses at `now` (their
    /// ``CacheEntry/discardAfter`` has passed).
    @discardableResult
    public func removeExpired(now: Date) throws -> Int {
        try removeWhere(
            "pinned = 0 AND \(Self.notInManifest) AND discardAfter IS NOT NULL AND discardAfter < ?",
            [now.timeIntervalSince1970],
            what: "purge expired entries")
    }

    /// Removes everything in this store's namespace; other namespaces in the directory stay.
    @discardableResult
    public func removeAll() throws -> Int {
        let count = try removeAfterEntriesOnTheirWay(.everything, "1", [], what: "remove all entries")
        try database("remove the page manifests") {
            try pool.write { db in
                try db.execute(sql: "DELETE FROM manifest WHERE namespace = ?", arguments: [namespace])
            }
        }
        for name in files.namespaceFiles() where name.hasSuffix(BodyFiles.bodySuffix) {
            // Bodies no row points to any more (a racing writer's are swept on the next open).
            POSIX.unlinkIfPresent(files.path(name))
        }
        openBodies.forgetAll()
        memory.invalidateAll()
        return count
    }

    /// Pins or unpins every entry of `group`, those on their way into the index too. Pinned
    /// entries are never evicted.
    @discardableResult
    public func setPinned(_ pinned: Bool, group: String) throws -> Int {
        newRows.waitForSubmittedRows()
        let count = try database("pin group \(group)") {
            try pool.write { db in
                try db.execute(
                    sql: "UPDATE entry SET pinned = ? WHERE namespace = ? AND groupName = ?",
                    arguments: [pinned, namespace, group])
                return db.changesCount
            }
        }
        memory.invalidateAll()
        return count
    }

    /// Removes the rows `ids`; `broken` ones (a body that failed its checks) have their files
    /// deleted rather than kept as spare files.
    @discardableResult
    func removeRows(ids: [Int64], broken: Bool = false) throws -> Int {
        guard !ids.isEmpty else { return 0 }
        return try removeWhere(
            "id IN (\(ids.map(String.init).joined(separator: ",")))", [], what: "remove entries", broken: broken)
    }

    /// Returns once the entries already on their way into the index are in it (or failed), without
    /// blocking the thread: call it before a removal from an event loop or a task, so that the
    /// removal's own wait for them is short.
    package func entriesOnTheirWayWritten() async {
        await newRows.submittedRowsWritten()
    }

    /// ``removeWhere(_:_:what:broken:)`` once the entries already on their way into the index are in it
    /// (``GroupCommit/waitForSubmittedRows()``): a removal by key, URL, host or group then also
    /// removes an entry a response stored just before. It is noted first (``RemovalFences``):
    /// an entry whose request went out before it and whose row comes later is turned away.
    private func removeAfterEntriesOnTheirWay(
        _ scope: RemovalFences.Scope, _ condition: String, _ arguments: StatementArguments, what: String
    ) throws -> Int {
        // Entries already answered (stored without waiting for the index) are written first,
        // then removed and counted like any other.
        newRows.waitForSubmittedRows()
        removalFences.withLock { $0.note(scope) }
        newRows.waitForSubmittedRows()
        return try removeWhere(condition, arguments, what: what)
    }

    func removeWhere(_ condition: String, _ arguments: StatementArguments, what: String, broken: Bool = false) throws
        -> Int
    {
        let removed = try database(what) {
            try pool.write { db -> [RemovedRow] in
                let rows = try RemovedRow.fetchAll(
                    db, sql: "SELECT \(RemovedRow.columns) FROM entry WHERE namespace = ? AND (\(condition))",
                    arguments: [namespace] + arguments)
                try UsageAccounting.deleteEntries(rows.map(\.id), in: db)
                return rows
            }
        }
        finishRemoval(removed, alsoInvalidating: [], broken: broken)
        return removed.count
    }

    /// After the index no longer points at them: keep the files as spare ones or delete them
    /// (always when they are `broken`), and forget the keys. Spare files given up in the same
    /// transaction are deleted first.
    func finishRemoval(_ removed: [RemovedRow], alsoInvalidating keys: [CacheKey], broken: Bool = false) {
        spares.deleteShed(in: files)
        if !removed.isEmpty {
            verifiedBodies.withLock { verified in
                for row in removed { verified.remove(row.id) }
            }
            // Let go first, so that a file no answer is still sending can be recycled.
            openBodies.forget(removed.map(\.id))
        }
        for row in removed {
            // A name from a damaged index that points elsewhere is left alone.
            guard let file = row.bodyFile, BodyFiles.isBodyName(file) else { continue }
            if broken || !spares.recycle(file, in: files) { POSIX.unlinkIfPresent(files.path(file)) }
        }
        memory.invalidate(keys + removed.map(\.key))
    }
}
