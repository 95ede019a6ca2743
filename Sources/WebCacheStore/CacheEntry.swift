import HTTPCaching
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A stored response as the store returns it: the head and its exchange times, the body's
/// size and whereabouts, and the store's own bookkeeping.
public struct CacheEntry: Sendable, Hashable {
    /// The entry's identity in the index.
    public let id: Int64
    /// The primary key.
    public let key: CacheKey
    /// The secondary key (RFC 9111 §4.1), empty when the response does not vary.
    public let varyKey: String
    /// The response head, the request fields its `Vary` names, and the exchange times.
    public var stored: StoredResponse
    /// The body's length in bytes.
    public let bodySize: Int
    /// When the entry was last served (for LRU eviction).
    public var lastAccess: Date
    /// An expiry set by the app (TTL override, sliding expiry), when there is one.
    public var appExpiry: Date?
    /// When the entry becomes useless even as a stale response, when known (purged after it).
    public var discardAfter: Date?
    /// The group the entry belongs to (a preloaded page), if any.
    public var group: String?
    /// Whether the entry is pinned: eviction skips it; only explicit removal deletes it.
    public var isPinned: Bool

    /// Where the body is.
    package var body: BodyLocation
}

/// Where a stored body lives.
package enum BodyLocation: Sendable, Hashable {
    /// In memory: a small body kept inline in the index.
    case data(Data)
    /// Inline in the index but not loaded (entries listed without their bodies).
    case inlineUnloaded
    /// In a file under the store's body directory, with the checksum it must have.
    case file(name: String, checksum: UInt32)
    /// In a file, and held by the memory tier too, as read (and verified) from the file.
    case fileInMemory(name: String, checksum: UInt32, data: Data)

    /// The body file's name and checksum, when the body is in a file.
    var file: (name: String, checksum: UInt32)? {
        switch self {
        case .file(let name, let checksum), .fileInMemory(let name, let checksum, _): return (name, checksum)
        case .data, .inlineUnloaded: return nil
        }
    }
}

/// What the caller provides to store a response.
public struct NewEntry: Sendable {
    /// The response head and the request that produced it, with the exchange times.
    public var stored: StoredResponse
    /// The app-set expiry (TTL override), if any.
    public var appExpiry: Date?
    /// When the entry becomes useless even as a stale response, if known.
    public var discardAfter: Date?
    /// The group to file the entry under (a preloaded page), if any.
    public var group: String?
    /// Whether the entry is pinned (never evicted, only removed explicitly).
    public var isPinned: Bool
    /// The store's ``CacheStore/removalMark`` when the request was sent: the entry is not
    /// stored if an entry for its URL was removed since. `nil` (the default) stores it whatever
    /// was removed.
    public var removalMark: RemovalMark?

    /// Describes an entry to store.
    public init(
        stored: StoredResponse, appExpiry: Date? = nil, discardAfter: Date? = nil,
        group: String? = nil, isPinned: Bool = false
    ) {
        self.stored = stored
        self.appExpiry = appExpiry
        self.discardAfter = discardAfter
        self.group = group
        self.isPinned = isPinned
    }
}
