import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The storage part of a configuration file (capacities in memory and on disk, and the sub-directory):
///
/// ```yaml
/// storage:
///   subdirectory: articles       # inside the cache directory
///   memoryCapacity: 33554432
///   diskCapacity: 536870912
///   maximumEntrySize: 67108864
///   maximumVariants: 8           # responses with Vary kept per URL
/// ```
public struct StorageSettings: Sendable, Hashable, Codable {
    /// A sub-directory of the cache directory to use instead of it.
    public var subdirectory: String?
    /// Bytes kept in memory.
    public var memoryCapacity: Int?
    /// Bytes kept on disk.
    public var diskCapacity: Int?
    /// The largest body stored.
    public var maximumEntrySize: Int?
    /// The variants kept of one URL (`CacheStore.Configuration.maximumVariants`).
    public var maximumVariants: Int?

    /// Creates settings; `nil` keeps the store's default.
    public init(
        subdirectory: String? = nil, memoryCapacity: Int? = nil, diskCapacity: Int? = nil, maximumEntrySize: Int? = nil,
        maximumVariants: Int? = nil
    ) {
        self.subdirectory = subdirectory
        self.memoryCapacity = memoryCapacity
        self.diskCapacity = diskCapacity
        self.maximumEntrySize = maximumEntrySize
        self.maximumVariants = maximumVariants
    }

    /// Applies the settings to a store configuration rooted at `directory`.
    public func apply(to configuration: inout CacheStore.Configuration) throws {
        if let subdirectory {
            guard !subdirectory.isEmpty, !subdirectory.contains(".."), !subdirectory.hasPrefix("/") else {
                throw PolicyError(
                    .invalidConfiguration, "storage.subdirectory must be a relative name, not '\(subdirectory)'")
            }
            configuration.directory = configuration.directory.appendingPathComponent(subdirectory)
        }
        for (name, value) in [
            ("memoryCapacity", memoryCapacity), ("diskCapacity", diskCapacity), ("maximumEntrySize", maximumEntrySize),
        ] {
            if let value, value < 0 { throw PolicyError(.invalidConfiguration, "storage.\(name) must not be negative") }
        }
        if let memoryCapacity { configuration.memoryCapacity = memoryCapacity }
        if let diskCapacity { configuration.diskCapacity = diskCapacity }
        if let maximumEntrySize { configuration.maximumEntrySize = maximumEntrySize }
        if let maximumVariants {
            guard maximumVariants >= 1 else {
                throw PolicyError(
                    .invalidConfiguration, "storage.maximumVariants must be at least 1, not \(maximumVariants)")
            }
            configuration.maximumVariants = maximumVariants
        }
    }
}
