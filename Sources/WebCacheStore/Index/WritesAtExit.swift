import Dispatch
import HTTPCaching

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Entries stored without waiting for the index (``BodyWriter/commitWithoutWaiting(whenWritten:)``)
/// are written before the process exits normally (`exit`, or the end of `main`): every open
/// store is registered here, and an `atexit` handler waits for the rows each still has on their
/// way. A process killed outright loses them, as it loses anything not yet written; the store
/// stays consistent either way. A store whose writer is stuck (a disk that hangs) holds the exit
/// at most ``limit``. Then each store's spare body files (emptied files of removed entries kept
/// for new bodies) are deleted, so that a short-lived process leaves none behind.
enum WritesAtExit {
    /// Weak, so that registering keeps no store open (a weak reference is read atomically).
    private final class Registered: @unchecked Sendable {
        weak var store: CacheStore?
        init(_ store: CacheStore) { self.store = store }
    }

    private static let stores = Locked<[ObjectIdentifier: Registered]>([:])
    /// Installs the handler the first time it is read (a static's initializer runs once).
    private static let handler: Void = { atexit { WritesAtExit.writeAll() } }()

    /// Has `store`'s pending rows written at exit.
    static func register(_ store: CacheStore) {
        stores.withLock { $0[ObjectIdentifier(store)] = Registered(store) }
        handler
    }

    /// Forgets `store` (it is going away).
    static func unregister(_ store: CacheStore) {
        stores.withLock { $0[ObjectIdentifier(store)] = nil }
    }

    /// Writes what every open store has on its way (the `atexit` handler).
    static func writeAll() {
        // Each store is held only while its own rows are waited for: one whose writer is stuck
        // must not keep the others open (a store closed meanwhile goes, and its lock with it).
        for registered in stores.withLock({ Array($0.values) }) {
            guard let store = registered.store else { continue }
            if !store.newRows.waitForSubmittedRows(atMost: limit) {
                store.logger.warning("exiting with entries not yet in the index after \(limit): they are not stored")
            }
            store.spares.deleteAll(in: store.files)
        }
    }

    /// How long an exit waits for each store's entries on their way.
    static let limit = DispatchTimeInterval.seconds(5)
}
