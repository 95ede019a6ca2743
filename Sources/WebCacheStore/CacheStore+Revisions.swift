import Dispatch

extension CacheStore {
    /// A stamp that changes whenever this process stores, replaces, refreshes or removes an entry
    /// or gives one a new app-set expiry. While it stays the same, a lookup returns the same
    /// entries. Only meaningful with the memory tier on (see ``lookupWithRevision(_:)``).
    package var revision: UInt64 { memory.revision }

    /// ``lookup(_:)``, with the ``revision`` the entries belong to when the memory tier answered:
    /// then a lookup returns them again until the revision changes. `nil` when they came from the
    /// index (the memory tier is off, or did not hold the key yet). Like the memory tier itself,
    /// the revision does not see changes made by another process sharing the directory.
    package func lookupWithRevision(_ key: CacheKey) throws -> (entries: [CacheEntry], revision: UInt64?) {
        if let held = memory.entriesAndRevision(for: key) { return (held.entries, held.revision) }
        waitForEntryOnItsWay(key)
        return (try lookupInIndex(key), nil)
    }

    /// ``lookupWithRevision(_:)`` without blocking: `nil` when a new entry for `key` is on its
    /// way into the index (stored by ``BodyWriter/commitWithoutWaiting(whenWritten:)``), where
    /// ``lookupWithRevision(_:)`` would block the thread until the index has it. Await
    /// ``entryOnItsWayWritten(_:atMost:)``, then look up again; with `ignoringEntriesOnTheirWay`,
    /// the entries the index holds now, without the one on its way (once the wait ran out).
    package func lookupWithRevisionUnlessOnItsWay(
        _ key: CacheKey, ignoringEntriesOnTheirWay: Bool = false
    ) throws -> (entries: [CacheEntry], revision: UInt64?)? {
        if let held = memory.entriesAndRevision(for: key) { return (held.entries, held.revision) }
        if !ignoringEntriesOnTheirWay && memory.isOnItsWay(key) { return nil }
        return (try lookupInIndex(key), nil)
    }

    /// Returns once no new entry for `key` is on its way into the index (at once when none
    /// is), suspending instead of blocking: the asynchronous form of the wait inside
    /// ``lookup(_:)``, bounded the same way, each wait at most `limit`. `false` when a wait ran
    /// out (a writer stuck on a hung disk): the entry is still on its way.
    @discardableResult
    package func entryOnItsWayWritten(_ key: CacheKey, atMost limit: DispatchTimeInterval = .never) async -> Bool {
        for _ in 0..<3 where memory.isOnItsWay(key) {
            guard await newRows.submittedRowsWritten(atMost: limit) else { return false }
        }
        return true
    }
}
