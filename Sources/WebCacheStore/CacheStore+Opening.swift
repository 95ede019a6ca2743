import GRDB
import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheStore {
    /// Opens the index, migrating it; a file that is not a readable SQLite database is moved
    /// aside (`index.sqlite.corrupt-<time>`) and replaced by an empty index — but only by a
    /// process `alone` in the directory: another process may still be writing into that file,
    /// and what it writes would be lost with the renamed file at its next start.
    static func openIndex(at path: String, alone: Bool, logger: Logger) throws -> DatabasePool {
        do {
            return try makePool(at: path)
        } catch let error as DatabaseError where [.SQLITE_CORRUPT, .SQLITE_NOTADB].contains(error.resultCode) {
            guard alone else {
                throw StoreError(
                    .databaseFailure,
                    "the cache index at \(path) is corrupt and another process is using the cache directory; it is left as it is (stop the other processes, then open the cache again to start a new index)",
                    cause: error)
            }
            let aside = "\(path).corrupt-\(Int(Date().timeIntervalSince1970))"
            logger.warning("the cache index at \(path) is corrupt (\(error)); moving it to \(aside) and starting empty")
            for suffix in ["", "-wal", "-shm"] {
                do { try POSIX.moveFile(path + suffix, aside + suffix) } catch { POSIX.unlinkIfPresent(path + suffix) }
            }
            do {
                return try makePool(at: path)
            } catch {
                throw StoreError(.databaseFailure, "could not create a new cache index at \(path)", cause: error)
            }
        } catch {
            throw StoreError(.databaseFailure, "could not open the cache index at \(path)", cause: error)
        }
    }

    private static func makePool(at path: String) throws -> DatabasePool {
        var configuration = GRDB.Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // WAL with synchronous=NORMAL cannot corrupt the index; a power cut may lose the
            // last writes, which recovery then reconciles with the body files.
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            // Sorts and temporary tables in memory, not in files created and deleted in /var/tmp.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
            // Debian's SQLite (built with SQLITE_SECURE_DELETE) zeroes every deleted byte, which
            // writes each page an evicted body freed once more; FAST zeroes only where it costs
            // no writes.
            try db.execute(sql: "PRAGMA secure_delete = FAST")
            // No statement journal for every stored row: this process counts what the triggers
            // would (UsageAccounting); other processes keep their triggers.
            try UsageAccounting.turnOffTriggers(db)
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try StoreSchema.migrator.migrate(pool)
        // Reading the schema and a row proves the file is a database we can use.
        _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM usage") }
        return pool
    }

    /// Recovery for a process that has the directory to itself: removes body files no row
    /// points to (half-written ones among them), the temporary files earlier versions wrote,
    /// and rows whose body file is missing.
    static func sweep(pool: DatabasePool, files: BodyFiles, logger: Logger) throws {
        let onDisk = files.allFiles()
        var bodies = Set<String>()
        var temporaries = 0
        for name in onDisk {
            if name.hasSuffix(BodyFiles.bodySuffix) {
                bodies.insert(name)
            } else {
                POSIX.unlinkIfPresent(files.path(name))
                temporaries += 1
            }
        }
        // A name that is not text (a blob of a damaged index) names no file: its row goes as one
        // whose body is missing.
        let referenced = try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, bodyFile FROM entry WHERE bodyFile IS NOT NULL")
                .map { (id: $0["id"] as Int64, file: (try? $0.decode(String.self, forColumn: "bodyFile")) ?? "") }
        }
        let missing = referenced.filter { !bodies.contains($0.file) }.map(\.id)
        if !missing.isEmpty {
            try pool.write { db in try UsageAccounting.deleteEntries(missing, in: db) }
        }
        let used = Set(referenced.map(\.file))
        let orphans = bodies.subtracting(used)
        for name in orphans { POSIX.unlinkIfPresent(files.path(name)) }
        if temporaries + missing.count + orphans.count > 0 {
            logger.warning(
                "cache recovery: removed \(temporaries) temporary files, \(orphans.count) bodies without an entry (half-written ones among them), \(missing.count) entries without a body"
            )
        }
    }
}

extension Array {
    func chunked(into size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
