import Dispatch

extension CacheStore {
    /// A stamp that changes whenever this process stores, replaces, refreshes or removes an entry
    /// or gives one a new app-set expiry. While it stays the same, a lookup returns the same
    /// entries. Only meaningful with the memory tier on (see ``lookupWithRevision(_:entryOnItsWay:)``).
    package var revision: UInt64 { memory.revision }

    /// What a lookup does while a new entry for its key is on its way into the index (stored by
    /// ``BodyWriter/commitWithoutWaiting(whenWritten:)``).
    package enum EntryOnItsWay: Sendable {
        /// Waits for it, blocking the thread, as ``lookup(_:)`` does.
        case waitFor
        /// Gives `nil`: the caller awaits ``entryOnItsWayWritten(_:atMost:)`` and looks up again
        /// (an event loop, which must not block).
        case report
        /// Reads the index as it is now, without it (once a wait ran out).
        case ignore
    }

    /// ``lookup(_:)``, with the ``revision`` the entries belong to when the memory tier answered:
    /// then a lookup returns them again until the revision changes. `nil` in the revision when
    /// they came from the index (the memory tier is off, or did not hold the key yet); `nil`
    /// altogether only for ``EntryOnItsWay/report`` while the key's new entry is on its way. Like
    /// the memory tier itself, the revision does not see changes made by another process sharing
    /// the directory.
    package func lookupWithRevision(
        _ key: CacheKey, entryOnItsWay: EntryOnItsWay
    ) throws -> (entries: [CacheEntry], revision: UInt64?)? {
        if let held = memory.entriesAndRevision(for: key) { return (held.entries, held.revision) }
        switch entryOnItsWay {
        case .waitFor: waitForEntryOnItsWay(key)
        case .report: if memory.isOnItsWay(key) { return nil }
        case .ignore: break
        }
        return (try lookupInIndex(key), nil)
    }

    /// Returns once no new entry for `key` is on its way into the index (at once when none
    /// is), suspending instead of blocking: the asynchronous form of the wait inside
    /// ``lookup(_:)``, bounded the same way: each wait at most `limit`, the store's patience
    /// unless told otherwise. `false` when a wait ran out (a writer stuck on a hung disk): the
    /// entry is still on its way.
    @discardableResult
    package func entryOnItsWayWritten(
        _ key: CacheKey, atMost limit: DispatchTimeInterval = entryOnItsWayPatience
    ) async -> Bool {
        for _ in 0..<3 where memory.isOnItsWay(key) {
            guard await newRows.submittedRowsWritten(atMost: limit) else { return false }
        }
        return true
    }
}
