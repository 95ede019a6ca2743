import Dispatch
import GRDB
import HTTPCaching
import Logging

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A durable HTTP response store: a SQLite index (GRDB, WAL) beside body files, a memory tier in
/// front, LRU eviction under a byte budget, pinned groups, and recovery on open.
///
/// Safe from any thread or task: reads run in parallel, writes do not block reads, and several
/// processes may open the same directory (SQLite's locking plus atomic renames; a lock file lets
/// only a process that is alone run the recovery sweep).
///
/// ```swift
/// let store = try CacheStore(configuration: .init(directory: cacheDirectory))
/// try store.store(NewEntry(stored: exchange), body: data)
/// for entry in try store.lookup(key) { … }
/// let body = try store.readBody(entry)
/// ```
///
/// ## Topics
///
/// ### Reading
/// - ``lookup(_:)``
/// - ``readBody(_:)``
/// - ``openBody(_:chunkSize:)``
///
/// ### Writing
/// - ``store(_:body:)``
/// - ``makeWriter(for:)``
/// - ``updateHead(of:with:)``
///
/// ### Removing
/// - ``remove(_:)``
/// - ``trim()``
///
/// ### Statistics
/// - ``statistics()``
public final class CacheStore: Sendable {
    /// The configuration the store was opened with.
    public let configuration: Configuration
    let pool: DatabasePool
    /// The index query of a lookup the memory tier cannot answer, on connections of its own.
    let entryLookup: EntryLookup
    let files: BodyFiles
    let memory: MemoryTier
    let accessLog: AccessLog
    /// Writes batches of access times one at a time, off the threads that record them.
    private let accessWrites = DispatchQueue(label: "WebCacheStore.access-times")
    /// Writes new entries' rows, many to a transaction (``GroupCommit``).
    let newRows = GroupCommit<NewRow, Int64>(label: "WebCacheStore.new-entries")
    /// Refreshed heads kept for a later write (``HeadRefreshes``).
    let headRefreshes = HeadRefreshes()
    /// What recent removals covered, for turning away entries removed while on their way.
    let removalFences = Locked(RemovalFences())
    /// Entries whose body file passed a checksum check in this process.
    let verifiedBodies = Locked(Set<Int64>())
    /// Verified body files kept open for sending.
    let openBodies = OpenBodyFiles()
    /// Emptied body files of removed entries, for new bodies.
    let spares: SpareBodyFiles
    /// Eviction has passed the capacity and goes on, a batch per new-entry transaction, until it
    /// is down to the trim target.
    let trimming = Locked(false)
    private let lockFile: Int32

    var namespace: String { configuration.namespace }
    var logger: Logger { configuration.logger }

    /// Opens (creating if needed) the store in `configuration.directory`, recovering from what an
    /// earlier crash or a stray hand left behind. A corrupt or unreadable index is moved aside
    /// and replaced by an empty one, with a warning: the store opens and works.
    public init(configuration: Configuration) throws {
        try configuration.validate()
        self.configuration = configuration
        let directory = configuration.directory.path
        try POSIX.makeDirectory(configuration.directory.deletingLastPathComponent().path)
        try POSIX.makeDirectory(directory)
        files = BodyFiles(directory: configuration.directory, namespace: configuration.namespace)
        try POSIX.makeDirectory(files.root)
        spares = SpareBodyFiles(byteLimit: SpareBodyFiles.byteLimit(for: configuration))
        memory = MemoryTier(capacity: configuration.memoryCapacity)
        accessLog = AccessLog()

        lockFile = open("\(directory)/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard lockFile >= 0 else {
            throw StoreError(
                .invalidConfiguration, "cannot use \(directory) as a cache directory: \(POSIX.errorText())")
        }
        let alone = POSIX.lock(lockFile, exclusive: true, wait: false)
        if !alone { _ = POSIX.lock(lockFile, exclusive: false, wait: true) }
        do {
            pool = try Self.openIndex(at: "\(directory)/index.sqlite", alone: alone, logger: configuration.logger)
            entryLookup = EntryLookup(path: "\(directory)/index.sqlite")
            if alone {
                try Self.sweep(pool: pool, files: files, logger: configuration.logger)
                _ = POSIX.lock(lockFile, exclusive: false, wait: true)
            }
        } catch {
            POSIX.closeFile(lockFile)
            throw error
        }
        WritesAtExit.register(self)
    }

    deinit {
        WritesAtExit.unregister(self)
        // Not through `accessWrites`: a write queued there holds the store, so none is running.
        writePendingAccesses()
        spares.deleteAll(in: files)
        POSIX.closeFile(lockFile)
    }

    // MARK: Reading

    /// Every stored variant for `key` (memory first, then the index); empty on a miss.
    /// An entry stored without waiting for the index (``BodyWriter/commitWithoutWaiting(whenWritten:)``)
    /// is found too: the lookup waits for it to be written.
    public func lookup(_ key: CacheKey) throws -> [CacheEntry] {
        if let entries = memory.entries(for: key) { return entries }
        waitForEntryOnItsWay(key)
        return try lookupInIndex(key)
    }

    /// Returns once no new entry for `key` is on its way into the index (at once when none is):
    /// blocks the thread while the index writes the entries submitted so far.
    func waitForEntryOnItsWay(_ key: CacheKey) {
        // Bounded: each wait lets every entry submitted before it in; a key stored again and
        // again meanwhile is read as the index has it after the third, and a writer stuck on a
        // hung disk holds a lookup for at most the patience.
        for _ in 0..<3 where memory.isOnItsWay(key) {
            guard newRows.waitForSubmittedRows(atMost: Self.entryOnItsWayPatience) else {
                logger.warning(
                    "the index has not taken \(key)'s new entry after \(Self.entryOnItsWayPatience); looking up without it"
                )
                return
            }
        }
    }

    /// How long a lookup waits for a new entry of its key to reach the index before it reads the
    /// index without it: the writer takes a millisecond or so, a checkpoint tens; one stuck on a
    /// hung disk must not hold lookups forever.
    package static let entryOnItsWayPatience = DispatchTimeInterval.seconds(2)

    /// How many times this store has queried its index for a key's rows since it was opened:
    /// lookups the memory tier did not answer. Beside the requests answered, it tells whether
    /// ``Configuration/memoryCapacity`` holds the entries asked for.
    public var indexLookups: Int { entryLookup.lookupsMade }

    /// The bytes of entries the memory tier holds now, as it counts them against
    /// ``Configuration/memoryCapacity``.
    public var memoryTierBytes: Int { memory.bytes }

    /// The variants for `key` read from the index, then held by the memory tier.
    func lookupInIndex(_ key: CacheKey) throws -> [CacheEntry] {
        let generation = memory.generation
        var entries = try database("look up \(key)") {
            // One SELECT reads a consistent snapshot by itself: no transaction needed around it.
            try entryLookup.rows(namespace: namespace, method: key.method, url: key.url)
        }.compactMap { row -> CacheEntry? in
            guard let entry = row.entry() else {
                logger.warning("unreadable index row for \(key); removing it")
                _ = try? removeRows(ids: [row.id].compactMap { $0 }, broken: true)
                return nil
            }
            return entry
        }
        let expiries = accessLog.pendingExpiries(for: entries.map(\.id))
        if !expiries.isEmpty {
            entries = entries.map { entry in
                var entry = entry
                if let expiry = expiries[entry.id] { entry.appExpiry = Date(timeIntervalSince1970: expiry) }
                return entry
            }
        }
        if !entries.isEmpty {  // misses are not remembered: another process may store the key
            memory.set(entries, for: key, ifGeneration: generation)
        }
        return entries
    }

    /// The whole body of `entry`. Use ``openBody(_:chunkSize:)`` for large bodies.
    ///
    /// A body file whose length (always) or checksum (on its first read in this process) does not
    /// match the index is deleted with its entry, and a ``StoreError`` with code `.corruptBody` is thrown:
    /// the caller treats it as a miss.
    public func readBody(_ entry: CacheEntry) throws -> Data {
        switch entry.body {
        case .data(let data), .fileInMemory(_, _, let data):
            return data
        case .inlineUnloaded:
            let data = try database("read the body of \(entry.key)") {
                try pool.read { db in
                    try Data.fetchOne(db, sql: "SELECT bodyInline FROM entry WHERE id = ?", arguments: [entry.id])
                }
            }
            guard let data else { throw StoreError(.corruptBody, "the entry for \(entry.key) is gone") }
            return data
        case .file(let name, let checksum):
            let verify = !verifiedBodies.withLock { $0.contains(entry.id) }
            do {
                let data = try files.read(name, size: entry.bodySize, checksum: checksum, verify: verify)
                if verify { verifiedBodies.withLock { _ = $0.insert(entry.id) } }
                memory.attachBody(data, to: entry.id, key: entry.key)
                return data
            } catch let error as StoreError {
                discardBroken(entry, because: error)
                throw StoreError(
                    .corruptBody, "the stored body of \(entry.key) is unusable and was removed", cause: error)
            }
        }
    }

    /// Records that `entry` was served at `date` (for LRU order) and, for sliding expiry, moves
    /// its app-set expiry to `appExpiry`. Writes to the index are batched and made on a queue of
    /// their own.
    public func recordAccess(_ entry: CacheEntry, at date: Date, appExpiry: Date? = nil) {
        if let appExpiry { memory.setAppExpiry(appExpiry, of: entry.id, key: entry.key) }
        if accessLog.record(id: entry.id, at: date, known: entry.lastAccess, appExpiry: appExpiry) {
            // Off the caller's thread (an event loop, a hit in progress): the write may wait
            // for another writer of the index, even another process's.
            accessWrites.async { [self] in writePendingAccesses() }
        }
    }

    /// Writes pending access times and expiries to the index, after any batch already on its way,
    /// and the refreshed heads kept for a later write.
    public func flushAccesses() {
        accessWrites.sync { writePendingAccesses() }
    }

    /// Pending access times for a write of the caller's own, once any batch on its way is
    /// written: eviction in that write sees every access recorded before it. Call it before
    /// taking the index's writer, which the batch needs.
    func drainAccesses() -> [Int64: AccessLog.Pending] {
        accessWrites.sync { accessLog.drain() }
    }

    /// Writes the pending access times and the refreshed heads kept for a later write
    /// (``HeadRefreshes``) in one transaction.
    private func writePendingAccesses() {
        let pending = accessLog.drain()
        let kept = headRefreshes.drain()
        guard !pending.isEmpty || !kept.isEmpty else { return }
        do {
            try pool.write { db in
                try AccessLog.apply(pending, in: db)
                try HeadRefreshes.apply(kept, in: db)
            }
        } catch {
            logger.warning("could not record access times and refreshed heads: \(error)")
        }
    }

    // MARK: Helpers

    /// Runs an index operation, turning database errors into ``StoreError``s that say what failed.
    func database<Result>(_ what: @autoclosure () -> String, _ body: () throws -> Result) throws -> Result {
        // `what` is only described when something failed: lookups and stores run this for
        // every miss, and building "look up <key>" each time cost allocations for nothing.
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(.databaseFailure, "could not \(what())", cause: error)
        }
    }

    func discardBroken(_ entry: CacheEntry, because error: StoreError) {
        logger.warning("removing \(entry.key): \(error)")
        _ = try? removeRows(ids: [entry.id], broken: true)
    }
}
