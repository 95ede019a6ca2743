import HTTPCaching

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The in-memory tier: the variants of recently used keys, with their bodies when small,
/// least-recently-used first out once their bytes pass the capacity.
///
/// It mirrors the index for this process only; every write through the store invalidates the
/// key it touches, and a ``generation`` check stops a lookup that raced a write from putting
/// outdated entries back.
final class MemoryTier: Sendable {
    private final class Node {
        let key: CacheKey
        var entries: [CacheEntry]
        var cost: Int
        var newer: Node?
        unowned(unsafe) var older: Node?

        init(key: CacheKey, entries: [CacheEntry], cost: Int) {
            self.key = key
            self.entries = entries
            self.cost = cost
        }
    }

    private struct State {
        var nodes: [CacheKey: Node] = [:]
        var newest: Node?
        var oldest: Node?
        var bytes = 0
        var generation: UInt64 = 0
        var revision: UInt64 = 0
        /// Keys with a new entry on its way into the index, and how many: not held meanwhile.
        var onTheirWay: [CacheKey: Int] = [:]
    }

    let capacity: Int
    /// Bodies larger than this are never held in memory.
    let maximumBodySize: Int
    private let state = Locked(State())

    init(capacity: Int) {
        self.capacity = capacity
        self.maximumBodySize = capacity / 8
    }

    var isEnabled: Bool { capacity > 0 }

    /// The bytes held.
    var bytes: Int { state.withLock { $0.bytes } }

    /// A stamp that changes on every invalidation.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// A stamp that changes whenever anything it holds changes: an invalidation, or an app-set
    /// expiry updated in place.
    var revision: UInt64 { state.withLock { $0.revision } }

    /// The entries held for `key`, with the ``revision`` they belong to.
    func entriesAndRevision(for key: CacheKey) -> (entries: [CacheEntry], revision: UInt64)? {
        guard isEnabled else { return nil }
        return state.withLock { state in
            guard let node = state.nodes[key] else { return nil }
            Self.moveToNewest(node, in: &state)
            return (node.entries, state.revision)
        }
    }

    func entries(for key: CacheKey) -> [CacheEntry]? {
        entriesAndRevision(for: key)?.entries
    }

    /// Holds `entries` for `key`, unless the tier was invalidated since `generation` or a new
    /// entry for `key` is on its way into the index.
    func set(_ entries: [CacheEntry], for key: CacheKey, ifGeneration generation: UInt64) {
        guard isEnabled else { return }
        let cost = Self.cost(of: entries)
        guard cost <= capacity else { return }
        state.withLock { state in
            guard state.generation == generation, state.onTheirWay[key] == nil else { return }
            if let node = state.nodes[key] {
                state.bytes += cost - node.cost
                node.entries = entries
                node.cost = cost
                Self.moveToNewest(node, in: &state)
            } else {
                let node = Node(key: key, entries: entries, cost: cost)
                state.nodes[key] = node
                state.bytes += cost
                Self.link(node, in: &state)
            }
            while state.bytes > capacity, let oldest = state.oldest {
                Self.remove(oldest, in: &state)
            }
        }
    }

    /// Replaces one entry's body by its loaded data, when the key is still held.
    func attachBody(_ data: Data, to entryID: Int64, key: CacheKey) {
        guard isEnabled, data.count <= maximumBodySize else { return }
        state.withLock { state in
            guard let node = state.nodes[key], let index = node.entries.firstIndex(where: { $0.id == entryID }),
                let file = node.entries[index].body.file
            else { return }
            node.entries[index].body = .fileInMemory(name: file.name, checksum: file.checksum, data: data)
            let cost = Self.cost(of: node.entries)
            state.bytes += cost - node.cost
            node.cost = cost
            while state.bytes > capacity, let oldest = state.oldest {
                Self.remove(oldest, in: &state)
            }
        }
    }

    /// Moves the app-set expiry of a held entry (sliding expiry).
    func setAppExpiry(_ expiry: Date, of entryID: Int64, key: CacheKey) {
        guard isEnabled else { return }
        state.withLock { state in
            guard let node = state.nodes[key], let index = node.entries.firstIndex(where: { $0.id == entryID }) else {
                return
            }
            node.entries[index].appExpiry = expiry
            state.revision &+= 1
        }
    }

    /// Replaces the stored head and exchange times of a held entry (a 304 refreshed it), so that
    /// the next lookup finds it here rather than in the index. Like an invalidation, it stops
    /// lookups under way from putting back what they read before. Returns whether it held the
    /// entry.
    @discardableResult
    func setStored(_ stored: StoredResponse, of entryID: Int64, key: CacheKey) -> Bool {
        guard isEnabled else { return false }
        return state.withLock { state in
            state.generation &+= 1
            state.revision &+= 1
            guard let node = state.nodes[key], let index = node.entries.firstIndex(where: { $0.id == entryID }) else {
                return false
            }
            node.entries[index].stored = stored
            let cost = Self.cost(of: node.entries)
            state.bytes += cost - node.cost
            node.cost = cost
            while state.bytes > capacity, let oldest = state.oldest {
                Self.remove(oldest, in: &state)
            }
            return state.nodes[key] != nil
        }
    }

    /// A new entry for `key` is on its way into the index: what is held for `key` goes, lookups
    /// under way do not put back what they read, and none holds `key` again until
    /// ``entryArrived(_:)``. Works with the tier off too (the index's readers ask
    /// ``isOnItsWay(_:)``).
    func entryOnItsWay(_ key: CacheKey) {
        state.withLock { state in
            // No new generation: a lookup under way for this key cannot put back what it read
            // while the key is on its way (see `set`), nor after, since the writer invalidates
            // the key when the row is in; lookups of other keys go on undisturbed.
            state.onTheirWay[key, default: 0] += 1
            state.revision &+= 1
            if let node = state.nodes[key] { Self.remove(node, in: &state) }
        }
    }

    /// The entry announced by ``entryOnItsWay(_:)`` is in the index, or failed to get there.
    func entryArrived(_ key: CacheKey) {
        state.withLock { state in
            if let count = state.onTheirWay[key], count > 1 {
                state.onTheirWay[key] = count - 1
            } else {
                state.onTheirWay[key] = nil
            }
            state.revision &+= 1
        }
    }

    /// Whether a new entry for `key` is on its way into the index.
    func isOnItsWay(_ key: CacheKey) -> Bool {
        state.withLock { $0.onTheirWay[key] != nil }
    }

    func invalidate(_ keys: some Sequence<CacheKey>) {
        state.withLock { state in
            state.generation &+= 1
            state.revision &+= 1
            for key in keys {
                if let node = state.nodes[key] { Self.remove(node, in: &state) }
            }
        }
    }

    func invalidateAll() {
        state.withLock { state in
            state.generation &+= 1
            state.revision &+= 1
            state.nodes.removeAll()
            state.newest = nil
            state.oldest = nil
            state.bytes = 0
        }
    }

    private static func link(_ node: Node, in state: inout State) {
        node.older = state.newest
        node.newer = nil
        state.newest?.newer = node
        state.newest = node
        if state.oldest == nil { state.oldest = node }
    }

    private static func unlink(_ node: Node, in state: inout State) {
        if let newer = node.newer { newer.older = node.older } else { state.newest = node.older }
        if let older = node.older { older.newer = node.newer } else { state.oldest = node.newer }
        node.newer = nil
        node.older = nil
    }

    private static func moveToNewest(_ node: Node, in state: inout State) {
        guard state.newest !== node else { return }
        unlink(node, in: &state)
        link(node, in: &state)
    }

    private static func remove(_ node: Node, in state: inout State) {
        unlink(node, in: &state)
        state.nodes[node.key] = nil
        state.bytes -= node.cost
    }
}
