import GRDB

/// What a store holds.
public struct StoreStatistics: Sendable, Hashable {
    /// Entries and body bytes for one host.
    public struct HostUsage: Sendable, Hashable {
        /// The host.
        public var host: String
        /// Entries stored for it.
        public var entries: Int
        /// Body bytes stored for it.
        public var bytes: Int

        /// Creates a row of usage.
        public init(host: String, entries: Int, bytes: Int) {
            self.host = host
            self.entries = entries
            self.bytes = bytes
        }
    }

    /// Entries in this namespace.
    public var entries: Int
    /// Body bytes in this namespace (inline and in files).
    public var diskBytes: Int
    /// Entries that are pinned.
    public var pinnedEntries: Int
    /// Bytes in the files of removed entries this process keeps for new bodies (spare files);
    /// they count toward the disk capacity beside ``diskBytes``.
    public var spareBytes = 0
    /// Bytes held by this process's memory tier.
    public var memoryBytes: Int
    /// Usage per host, most bytes first.
    public var hosts: [HostUsage]
}

extension CacheStore {
    /// Counts entries and bytes, in total and per host, entries on their way into the index
    /// included (it waits for them).
    public func statistics() throws -> StoreStatistics {
        newRows.waitForSubmittedRows()
        flushAccesses()
        return try database("read cache statistics") {
            try pool.read { db in
                let usage = try Row.fetchOne(
                    db, sql: "SELECT entries, bytes FROM usage WHERE namespace = ?", arguments: [namespace])
                let pinned =
                    try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM entry WHERE namespace = ? AND pinned = 1", arguments: [namespace]
                    ) ?? 0
                let hosts = try Row.fetchAll(
                    db,
                    sql:
                        "SELECT host, count(*) AS entries, sum(bodySize) AS bytes FROM entry WHERE namespace = ? GROUP BY host ORDER BY bytes DESC, host",
                    arguments: [namespace]
                ).map {
                    StoreStatistics.HostUsage(
                        host: try $0.decode(forColumn: "host"), entries: try $0.decode(forColumn: "entries"),
                        bytes: try $0.decode(forColumn: "bytes"))
                }
                return StoreStatistics(
                    entries: try usage?.decode(forColumn: "entries") ?? 0,
                    diskBytes: try usage?.decode(forColumn: "bytes") ?? 0, pinnedEntries: pinned,
                    spareBytes: spares.bytesHeld(), memoryBytes: memory.bytes, hosts: hosts)
            }
        }
    }

    /// Entries of this namespace, most recently used first, optionally for one host or group;
    /// bodies are not loaded (``readBody(_:)`` fetches them). Entries on their way into the index
    /// are waited for and listed.
    public func entries(host: String? = nil, group: String? = nil, limit: Int? = nil) throws -> [CacheEntry] {
        newRows.waitForSubmittedRows()
        flushAccesses()
        var conditions = ["namespace = ?"]
        var arguments: StatementArguments = [namespace]
        if let host {
            conditions.append("host = ?")
            arguments += [host.lowercased()]
        }
        if let group {
            conditions.append("groupName = ?")
            arguments += [group]
        }
        let limitClause = limit.map { " LIMIT \(max(0, $0))" } ?? ""
        return try database("list entries") {
            try pool.read { db in
                try EntryRow.fetchAll(
                    db,
                    sql:
                        "SELECT \(EntryRow.selectionWithoutBodies) FROM entry WHERE \(conditions.joined(separator: " AND ")) ORDER BY lastAccess DESC\(limitClause)",
                    arguments: arguments)
            }
        }.compactMap { $0.entry() }
    }
}

extension CacheStore {
    /// The names (under the store's `bodies/`) of the files of removed entries this process
    /// keeps for new bodies: body files without a row, which are not stray.
    package var spareFileNames: [String] { spares.names() }
}
