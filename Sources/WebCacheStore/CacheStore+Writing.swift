import Dispatch
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
        return makeWriter(for: entry, key: key)
    }

    /// ``makeWriter(for:)`` for a caller that has the key of the entry's request already (the
    /// engine, which looked it up before the miss): the request's URL is not built and
    /// normalised again for every entry stored.
    package func makeWriter(for entry: NewEntry, key: CacheKey) -> BodyWriter {
        assert(CacheKey(request: entry.stored.request) == key, "\(key) is not the key of the entry's request")
        let specifier = VarySpecifier(entry.stored.response.headerFields)
        var trimmed = entry
        trimmed.stored.request.headerFields =
            specifier.names.isEmpty
            ? HTTPFields()
            : entry.stored.request.headerFields.filter { specifier.names.contains($0.name) }
                .reduce(into: HTTPFields()) { $0.append($1) }
        return BodyWriter(
            store: self, entry: trimmed, key: key,
            varyKey: VaryKey(specifier, request: entry.stored.request.headerFields).text)
    }

    /// Stores a response with a body already in memory; `nil` when the body is larger than the
    /// maximum entry size (then nothing is stored).
    @discardableResult
    public func store(_ entry: NewEntry, body: Data) throws -> CacheEntry? {
        let writer = try makeWriter(for: entry)
        writer.expect(size: body.count)
        try writer.write(body)
        return try writer.commit()
    }

    /// Stores many small responses in one transaction (e.g. the resources of a preloaded page).
    /// Bodies over ``Configuration/inlineBodyLimit`` go through ``makeWriter(for:)`` one by one;
    /// bodies over the maximum entry size are skipped. Returns the entries stored; throws the
    /// first failure (what was stored before it stays).
    @discardableResult
    public func storeBatch(_ items: [(entry: NewEntry, body: Data)]) throws -> [CacheEntry] {
        var stored: [CacheEntry] = []
        var inline: [(entry: NewEntry, key: CacheKey, varyKey: String, body: Data)] = []
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
        let rows = inline.map {
            makeRow($0.entry, key: $0.key, varyKey: $0.varyKey, body: .data($0.body), size: $0.body.count, now: now)
        }
        for (result, item) in zip(writeRows(rows), inline) {
            let id = try result.get()
            stored.append(
                CacheEntry(
                    id: id, key: item.key, varyKey: item.varyKey, stored: item.entry.stored, bodySize: item.body.count,
                    lastAccess: now,
                    appExpiry: item.entry.appExpiry, discardAfter: item.entry.discardAfter, group: item.entry.group,
                    isPinned: item.entry.isPinned, body: .data(item.body)))
        }
        return stored
    }

    /// Replaces the head and exchange times of a stored entry, e.g. after a 304 (RFC 9111 §4.3.4);
    /// the body stays. Lookups in this process see the new head at once; an entry refreshed again
    /// within a second (a page sent `no-cache`, revalidated on every request) has its head
    /// written to the index at most once a second, the latest one last.
    @discardableResult
    public func updateHead(of entry: CacheEntry, with stored: StoredResponse) throws -> CacheEntry {
        let head = HeadRefreshes.Pending(
            status: stored.response.status.code, headers: HeaderCoding.encode(stored.response.headerFields),
            requestTime: stored.requestTime.timeIntervalSince1970,
            responseTime: stored.responseTime.timeIntervalSince1970)
        let now = HeadRefreshes.now
        let held = memory.setStored(stored, of: entry.id, key: entry.key)
        if !held || !headRefreshes.keep(head, of: entry.id, now: now) {
            let changed = try database("update the stored head of \(entry.key)") {
                try pool.write { db in
                    // A cached statement: a page sent `no-cache` is refreshed on every request.
                    try db.cachedStatement(sql: HeadRefreshes.updateSQL).execute(
                        arguments: [head.status, head.headers, head.requestTime, head.responseTime, entry.id])
                    return db.changesCount
                }
            }
            guard changed > 0 else {
                memory.invalidate([entry.key])
                throw StoreError(.corruptBody, "the entry for \(entry.key) was removed meanwhile")
            }
            headRefreshes.wrote(entry.id, at: now)
        }
        var updated = entry
        updated.stored.response = stored.response
        updated.stored.requestTime = stored.requestTime
        updated.stored.responseTime = stored.responseTime
        return updated
    }

    /// Records a finished body in the index (called by ``BodyWriter/commit()``), replacing the
    /// entry with the same key and variant, then evicts if the store is over capacity — in a
    /// transaction shared with the entries stored at the same time (``GroupCommit``).
    func insert(_ new: NewEntry, key: CacheKey, varyKey: String, body: BodyLocation, size: Int) throws -> CacheEntry {
        let now = configuration.now()
        let row = makeRow(new, key: key, varyKey: varyKey, body: body, size: size, now: now)
        let id = try newRows.submitAndWait(NewRow(row: row, removalMark: new.removalMark)) { [self] rows in
            writeNewRows(rows)
        }
        return inserted(new, id: id, key: key, varyKey: varyKey, body: body, size: size, now: now)
    }

    /// ``insert(_:key:varyKey:body:size:)`` for a caller that awaits the transaction rather
    /// than blocking its thread (an event loop).
    func insert(_ new: NewEntry, key: CacheKey, varyKey: String, body: BodyLocation, size: Int) async throws
        -> CacheEntry
    {
        let now = configuration.now()
        let row = makeRow(new, key: key, varyKey: varyKey, body: body, size: size, now: now)
        let id = try await newRows.submit(NewRow(row: row, removalMark: new.removalMark)) { [self] rows in
            writeNewRows(rows)
        }
        return inserted(new, id: id, key: key, varyKey: varyKey, body: body, size: size, now: now)
    }

    /// ``insert(_:key:varyKey:body:size:)`` that does not wait: the row goes to the next
    /// transaction and `completion` runs on the writer's queue once it is in (or failed).
    /// Meanwhile lookups of `key` in this process wait for it (``lookup(_:)``), so a request that
    /// follows still finds the entry.
    func insertWithoutWaiting(
        _ new: NewEntry, key: CacheKey, varyKey: String, body: BodyLocation, size: Int,
        completion: @escaping @Sendable (Result<CacheEntry, any Error>) -> Void
    ) {
        let now = configuration.now()
        let row = makeRow(new, key: key, varyKey: varyKey, body: body, size: size, now: now)
        memory.entryOnItsWay(key)
        newRows.submit(NewRow(row: row, removalMark: new.removalMark), writer: { [self] in writeNewRows($0) }) {
            [self] result in
            memory.entryArrived(key)
            completion(
                result.map { inserted(new, id: $0, key: key, varyKey: varyKey, body: body, size: size, now: now) })
        }
    }

    /// Returns at once while the index keeps up with the entries on their way into it; once
    /// more are on their way than it should have (``entriesAllowedOnTheirWay(nanosecondsPerRow:)``),
    /// returns when the index is a transaction below that (``resumedBacklog(allowed:)``) of those
    /// submitted before the call. For a caller that stores without waiting
    /// (``BodyWriter/commitWithoutWaiting(whenWritten:)``) faster than the index takes the rows,
    /// misses at full speed: they then keep pace with the index, each waiting for about a
    /// transaction or two, and rows do not pile up in memory.
    ///
    /// Waits at most `limit` (``indexPatience``) and then returns `false`, and does not wait at
    /// all (`false`) while the writer has finished nothing for that long: a disk whose syncs
    /// hang must not hold every miss, one after the other. Rows then gather up to
    /// ``Configuration/maximumEntriesOnTheirWay``, past which new ones are not stored.
    @discardableResult
    package func keepPaceWithIndex(atMost limit: Duration = indexPatience) async -> Bool {
        let backlog = newRows.backlog
        let allowed = Self.entriesAllowedOnTheirWay(nanosecondsPerRow: backlog.nanosecondsPerRow)
        guard backlog.rows > allowed else { return true }
        let patience = max(0, limit.nanoseconds)
        guard backlog.nanosecondsStill < UInt64(patience) else { return false }
        return await newRows.backlogWritten(
            downTo: Self.resumedBacklog(allowed: allowed), atMost: .nanoseconds(Int(clamping: patience)))
    }

    /// Entries stored without waiting (``BodyWriter/commitWithoutWaiting(whenWritten:)``) that
    /// the index writer has not written yet, those of the transaction under way included. It
    /// stays near zero on a disk that keeps up; past ``Configuration/maximumEntriesOnTheirWay``
    /// new entries are not stored, as the index is too far behind.
    public var entriesWaitingForIndex: Int { Int(newRows.backlog.rows) }

    /// The longest a miss waits for the index to keep pace (``keepPaceWithIndex(atMost:)``), and
    /// how long the index writer may finish nothing before misses stop waiting for it. A
    /// transaction takes milliseconds (tens while a full cache evicts many small entries for
    /// each large one); a phone's flash can hold a sync for seconds, and a miss should not wait
    /// that long for a cache.
    package static let indexPatience = Duration.milliseconds(500)

    /// Throws when the entry for `key` must not join the rows on their way into the index: as
    /// many as ``Configuration/maximumEntriesOnTheirWay`` are already waiting.
    func checkRoomOnTheWay(for key: CacheKey) throws {
        let waiting = entriesWaitingForIndex
        guard waiting < configuration.maximumEntriesOnTheirWay else {
            throw StoreError(
                .indexBehind,
                "not storing \(key): \(waiting) entries are already waiting for the index (is its disk slow or stuck?)")
        }
    }

    /// The backlog a miss that waited goes on at: a transaction (``GroupCommit/maximumBatch``)
    /// below what is allowed, or half of it when that is less. Going on at the allowance itself
    /// let the next miss wait at once, so that the loop and the writer took turns a few rows at
    /// a time: 6–7 % fewer misses a second while the writer lagged (docs/Benchmarks.md, "Misses
    /// that keep pace with the index").
    package static func resumedBacklog(allowed: UInt64) -> UInt64 {
        allowed - min(allowed / 2, UInt64(GroupCommit<NewRow, Int64>.maximumBatch))
    }

    /// How many entries may be on their way into the index, for a writer that takes
    /// `nanosecondsPerRow` a row lately: at most 256 (what they hold in memory: heads, and bodies
    /// up to the inline limit), at most 50 ms of the writer's work (a lookup of a key on its
    /// way, or an exit, waits for them), and at least 16, so that the writer always has a batch.
    package static func entriesAllowedOnTheirWay(nanosecondsPerRow: UInt64) -> UInt64 {
        let (most, least, work): (UInt64, UInt64, UInt64) = (256, 16, 50_000_000)
        guard nanosecondsPerRow > 0 else { return most }
        return min(most, max(least, work / nanosecondsPerRow))
    }

    private func inserted(
        _ new: NewEntry, id: Int64, key: CacheKey, varyKey: String, body: BodyLocation, size: Int, now: Date
    ) -> CacheEntry {
        if case .file = body { verifiedBodies.withLock { _ = $0.insert(id) } }
        return CacheEntry(
            id: id, key: key, varyKey: varyKey, stored: new.stored, bodySize: size, lastAccess: now,
            appExpiry: new.appExpiry, discardAfter: new.discardAfter, group: new.group, isPinned: new.isPinned,
            body: body)
    }

    func makeRow(_ new: NewEntry, key: CacheKey, varyKey: String, body: BodyLocation, size: Int, now: Date) -> EntryRow
    {
        let stored = new.stored
        var row = EntryRow(
            id: nil, namespace: namespace, method: key.method, url: key.url, host: key.host, varyKey: varyKey,
            status: stored.response.status.code,
            requestHeaders: HeaderCoding.encode(stored.request.headerFields),
            responseHeaders: HeaderCoding.encode(stored.response.headerFields),
            requestTime: stored.requestTime.timeIntervalSince1970,
            responseTime: stored.responseTime.timeIntervalSince1970,
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
