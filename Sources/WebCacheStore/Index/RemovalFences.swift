/// A moment in a store's removals (``CacheStore/removalMark``). A cache takes one before it
/// sends a request to the origin and gives it with the entry made from the response
/// (``NewEntry/removalMark``): if an entry for that URL was removed after the mark — the URL
/// invalidated by an unsafe request (RFC 9111 §4.4), its host or group removed, the store
/// emptied — the response may hold what the removal was to discard, and it is not stored
/// (`StoreError.Code.removedMeanwhile`).
public struct RemovalMark: Sendable, Hashable {
    /// Removals made before the mark was taken.
    let count: UInt64
}

/// What each recent removal covered, for the index writer to turn away entries whose exchange
/// began before it (``RemovalMark``). A removal is noted before it waits for the entries
/// already on their way into the index and deletes, and the writer checks every row as it
/// writes it: a row is either written before the removal is noted, and then deleted by it, or
/// checked after, and then turned away.
///
/// Bounded: URLs are kept for the latest ``urlsKept`` removals and other scopes for the latest
/// ``scopesKept``; when one fills up it is forgotten and its removals count as removing
/// everything (an exchange that began before them is not stored, which is the safe side).
struct RemovalFences: Sendable {
    /// What a removal covered.
    enum Scope: Sendable {
        case url(String)
        case urlPrefix(String)
        case host(String)
        case group(String)
        case everything
    }

    static let urlsKept = 4096
    static let scopesKept = 64

    /// Removals noted so far.
    private(set) var count: UInt64 = 0
    /// The latest removal of each URL.
    private var urls: [String: UInt64] = [:]
    /// The latest removals by prefix, host and group, oldest first.
    private var scopes: [(scope: Scope, at: UInt64)] = []
    /// The latest removal of everything, or of scopes forgotten since.
    private var everything: UInt64 = 0

    var mark: RemovalMark { RemovalMark(count: count) }

    /// Notes a removal of `scope`.
    mutating func note(_ scope: Scope) {
        count += 1
        switch scope {
        case .everything:
            everything = count
            urls.removeAll()
            scopes.removeAll()
        case .url(let url):
            if urls.count >= Self.urlsKept, urls[url] == nil {
                forgetURLs()
            }
            urls[url] = count
        case .urlPrefix, .host, .group:
            if scopes.count >= Self.scopesKept {
                everything = max(everything, scopes.removeFirst().at)
            }
            scopes.append((scope, count))
        }
    }

    /// Whether a row for `url` (on `host`, in `group`) made from an exchange that began at
    /// `mark` was removed meanwhile.
    func removed(url: String, host: String, group: String?, since mark: RemovalMark) -> Bool {
        guard mark.count < count else { return false }
        if everything > mark.count { return true }
        if let at = urls[url], at > mark.count { return true }
        for (scope, at) in scopes.reversed() {
            guard at > mark.count else { break }
            switch scope {
            case .urlPrefix(let prefix): if url.utf8.starts(with: prefix.utf8) { return true }
            case .host(let removed): if host == removed { return true }
            case .group(let removed): if group == removed { return true }
            case .url, .everything: break
            }
        }
        return false
    }

    private mutating func forgetURLs() {
        everything = max(everything, urls.values.max() ?? 0)
        urls.removeAll(keepingCapacity: true)
    }
}
