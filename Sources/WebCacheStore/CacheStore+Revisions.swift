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
}
