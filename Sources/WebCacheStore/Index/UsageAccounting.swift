import CSQLiteSettings
import GRDB

/// How `usage` (each namespace's entries and body bytes, which capacity checks read) stays exact
/// while this process's connections to the index run without triggers.
///
/// A table with any trigger gives every `INSERT` and `DELETE` on it inside a transaction a
/// statement journal: before the statement first changes a page, SQLite copies the page aside in
/// case the statement must be undone alone. A stored row changes about five pages (the table's
/// leaf and its indexes'), so every stored entry copied some 20 KiB, in 1 KiB pieces: 24 of the 64
/// allocations the index writer made for a 1 KB entry, and 3–4 µs of SQLite's 14–15 (C, same
/// rows) — although `entry_added` does nothing for this writer's rows, which are counted a
/// transaction at a time (`countedByWriter`). So this process's connections prepare their
/// statements with triggers off (``turnOffTriggers(_:)``) and do the triggers' work themselves:
/// new rows are counted per transaction (`CacheStore.countInUsage`), removed rows by
/// ``deleteEntries(_:in:)``.
///
/// The schema is unchanged, so other processes on the same directory — versions from before
/// v6 among them, whose rows only `entry_added` counts — keep the triggers on their connections,
/// and the totals stay exact whichever process writes. This process's statements must therefore
/// delete rows only through ``deleteEntries(_:in:)``, and never change a row's `bodySize` or
/// `namespace` (`entry_resized`'s work), nor rely on a trigger in a migration. Foreign keys'
/// actions (a manifest's members deleted with it) are not triggers and still run.
enum UsageAccounting {
    /// Turns triggers off for the statements `db` prepares from now on: call it first thing on a
    /// connection (GRDB's `prepareDatabase`). Fails when SQLite refuses.
    static func turnOffTriggers(_ db: Database) throws {
        guard webcache_sqlite_set_triggers(db.sqliteConnection, 0) == 0 else {
            throw StoreError(.databaseFailure, "SQLite would not turn off triggers on a connection to the cache index")
        }
    }

    /// Inside a write transaction: deletes the rows `ids`, taking them out of their namespaces'
    /// `usage` first — what `entry_removed` does for a connection with triggers, with its
    /// arithmetic (SQLite's, so that a damaged size of the wrong type or sign counts as it did).
    /// Ids of rows that are not there are passed over.
    static func deleteEntries(_ ids: [Int64], in db: Database) throws {
        let subtract = try db.cachedStatement(sql: subtractSQL)
        for chunk in ids.chunked(into: 500) {
            let list = chunk.map(String.init).joined(separator: ",")
            // Each namespace's totals, in the order `subtractSQL` binds them.
            let removed = try Row.fetchAll(
                db,
                sql: "SELECT count(*), total(bodySize), namespace FROM entry WHERE id IN (\(list)) GROUP BY namespace")
            for totals in removed { try subtract.execute(arguments: StatementArguments(totals.databaseValues)) }
            try db.execute(sql: "DELETE FROM entry WHERE id IN (\(list))")
        }
    }

    /// Takes a count of entries and of bytes out of a namespace's totals (bound in that order).
    private static let subtractSQL = "UPDATE usage SET entries = entries - ?, bytes = bytes - ? WHERE namespace = ?"
}
