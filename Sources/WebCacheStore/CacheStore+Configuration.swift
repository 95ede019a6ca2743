import Logging

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheStore {
    /// Where and how much a store keeps.
    public struct Configuration: Sendable {
        /// The directory that holds the index and the bodies; created when missing. Several
        /// stores (namespaces) and several processes may share it.
        public var directory: URL
        /// The partition within the directory (e.g. one per account); wiping it leaves others.
        public var namespace: String
        /// Bytes of memory for hot entries: their heads and, when small, their bodies, as they
        /// take on the heap (an estimate counted per header field); 0 turns the memory tier off.
        public var memoryCapacity: Int
        /// Bytes of bodies kept on disk. Past it, least recently used unpinned entries are
        /// removed at once down to it, then on down to ``trimRatio`` of it a batch with each
        /// store that follows (at most 64 entries each, so that no store waits long;
        /// ``CacheStore/trim()`` goes down in one pass). Pinned entries count but are never
        /// evicted.
        public var diskCapacity: Int
        /// The largest body stored. A larger response is still served to its requester by the
        /// caller, but it is not stored: the writer drops it as soon as it grows past this.
        public var maximumEntrySize: Int
        /// Bodies up to this size live inline in the SQLite index, larger ones in files.
        public var inlineBodyLimit: Int
        /// The fraction of ``diskCapacity`` eviction trims down to.
        public var trimRatio: Double
        /// The variants kept of one URL (responses with `Vary`, one per set of the request fields
        /// it names): storing one more removes the least recently used unpinned one. A response
        /// that varies on `User-Agent` or `Cookie` would otherwise gather a variant per client
        /// in a shared cache, and every request for the URL reads them all (with 3,000, a hit
        /// took 12–18 ms instead of 0.2). Traffic Server keeps 5 by default.
        public var maximumVariants: Int
        /// The most entries stored without waiting (``BodyWriter/commitWithoutWaiting(whenWritten:)``)
        /// that may be on their way into the index at once; past it, such an entry is not stored
        /// (a ``StoreError`` with code `.indexBehind`) until the index catches up. Callers that
        /// keep pace with the index stay far below it; it bounds the memory that rows waiting
        /// for a stuck disk hold (heads, and bodies up to ``inlineBodyLimit``: 1,024 rows of 16 KB
        /// are 16 MB), as Traffic Server stops writing to its cache past its write backlog.
        public var maximumEntriesOnTheirWay: Int
        /// The clock.
        public var now: @Sendable () -> Date
        /// Where warnings (recovery, I/O failures) go.
        public var logger: Logger
        /// Test hook: called before each body write with the bytes written so far; throwing
        /// simulates a failing disk.
        package var writeFault: (@Sendable (Int) throws -> Void)?
        /// Test hook: called on the index writer with the URLs of each batch of new entries
        /// before it is written (holding it holds the batch).
        package var beforeWritingRows: (@Sendable ([String]) -> Void)?

        /// A configuration with capacities suited to an app: 32 MB in memory, 512 MB on disk,
        /// bodies up to 64 MB, 16 KB inline.
        public init(
            directory: URL, namespace: String = "default",
            memoryCapacity: Int = 32 << 20, diskCapacity: Int = 512 << 20,
            maximumEntrySize: Int = 64 << 20, inlineBodyLimit: Int = 16 << 10, trimRatio: Double = 0.8,
            maximumVariants: Int = 8, maximumEntriesOnTheirWay: Int = 1_024,
            now: @escaping @Sendable () -> Date = { Date() },
            logger: Logger = Logger(label: "WebCacheStore")
        ) {
            self.directory = directory
            self.namespace = namespace
            self.memoryCapacity = memoryCapacity
            self.diskCapacity = diskCapacity
            self.maximumEntrySize = maximumEntrySize
            self.inlineBodyLimit = inlineBodyLimit
            self.trimRatio = trimRatio
            self.maximumVariants = maximumVariants
            self.maximumEntriesOnTheirWay = maximumEntriesOnTheirWay
            self.now = now
            self.logger = logger
        }

        func validate() throws {
            guard memoryCapacity >= 0, diskCapacity >= 0, maximumEntrySize >= 0, inlineBodyLimit >= 0 else {
                throw StoreError(.invalidConfiguration, "capacities must not be negative")
            }
            guard maximumVariants >= 1 else {
                throw StoreError(.invalidConfiguration, "maximumVariants must be at least 1, not \(maximumVariants)")
            }
            guard maximumEntriesOnTheirWay >= 1 else {
                throw StoreError(
                    .invalidConfiguration,
                    "maximumEntriesOnTheirWay must be at least 1, not \(maximumEntriesOnTheirWay)")
            }
            guard trimRatio > 0, trimRatio <= 1 else {
                throw StoreError(.invalidConfiguration, "trimRatio must be in (0, 1], not \(trimRatio)")
            }
            guard !namespace.isEmpty, namespace.utf8.count <= 200 else {
                throw StoreError(.invalidConfiguration, "a namespace must have 1 to 200 bytes")
            }
        }
    }
}

extension CacheStore.Configuration {
    /// The bytes a trim goes down to: ``trimRatio`` of ``diskCapacity``.
    var trimTarget: Int {
        // What is trimmed below the capacity, subtracted: `Double(Int.max)` is 2^63, so the
        // product itself would trap converting back for a capacity of `Int.max` and a ratio of 1.
        let trimmed = (Double(diskCapacity) * (1 - trimRatio)).rounded()
        return trimmed >= Double(diskCapacity) ? 0 : diskCapacity - Int(trimmed)
    }
}
