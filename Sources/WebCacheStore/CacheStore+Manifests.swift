import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A preloaded page and everything it needs, kept as one unit: while a manifest holds a URL,
/// LRU eviction and expiry purges leave its entries alone; removing the manifest removes the
/// entries no other manifest holds.
public struct PageManifest: Sendable, Hashable {
    /// The manifest's name: the page's URL.
    public var name: String
    /// The URLs the page needs (the page first), as cache keys spell them.
    public var resources: [String]
    /// Whether every resource could be stored when the manifest was recorded.
    public var isComplete: Bool
    /// When it was recorded.
    public var createdAt: Date

    /// Describes a manifest; `resources` are normalised to cache-key form.
    public init(name: String, resources: [URL], isComplete: Bool, createdAt: Date) {
        self.name = name
        var seen = Set<String>()
        self.resources = resources.compactMap { CacheKey(url: $0)?.url }.filter { seen.insert($0).inserted }
        self.isComplete = isComplete
        self.createdAt = createdAt
    }

    init(name: String, keys: [String], isComplete: Bool, createdAt: Date) {
        self.name = name
        self.resources = keys
        self.isComplete = isComplete
        self.createdAt = createdAt
    }
}

extension CacheStore {
    /// Records `manifest`, replacing one of the same name.
    public func save(_ manifest: PageManifest) throws {
        try database("record the manifest of \(manifest.name)") {
            try pool.write { db in
                try db.execute(
                    sql: "DELETE FROM manifest WHERE namespace = ? AND name = ?", arguments: [namespace, manifest.name])
                try db.execute(
                    sql: "INSERT INTO manifest(namespace, name, createdAt, complete) VALUES (?, ?, ?, ?)",
                    arguments: [
                        namespace, manifest.name, manifest.createdAt.timeIntervalSince1970, manifest.isComplete,
                    ])
                let insert = try db.cachedStatement(
                    sql: "INSERT OR IGNORE INTO manifestMember(namespace, manifest, position, url) VALUES (?, ?, ?, ?)")
                for (position, url) in manifest.resources.enumerated() {
                    try insert.execute(arguments: [namespace, manifest.name, position, url])
                }
            }
        }
    }

    /// Every manifest, oldest first.
    public func manifests() throws -> [PageManifest] {
        try database("read the page manifests") {
            try pool.read { db in
                let members = try Row.fetchAll(
                    db, sql: "SELECT manifest, url FROM manifestMember WHERE namespace = ? ORDER BY manifest, position",
                    arguments: [namespace])
                var resources: [String: [String]] = [:]
                for member in members {
                    resources[try member.decode(forColumn: "manifest"), default: []].append(
                        try member.decode(forColumn: "url"))
                }
                return try Row.fetchAll(
                    db,
                    sql: "SELECT name, createdAt, complete FROM manifest WHERE namespace = ? ORDER BY createdAt, name",
                    arguments: [namespace]
                ).map { row in
                    let name: String = try row.decode(forColumn: "name")
                    return PageManifest(
                        name: name, keys: resources[name] ?? [], isComplete: try row.decode(forColumn: "complete"),
                        createdAt: Date(timeIntervalSince1970: try row.decode(forColumn: "createdAt")))
                }
            }
        }
    }

    /// Whether a page manifest holds `key`'s URL: a preloaded page or one of its resources,
    /// which the app asked to be readable offline.
    public func isHeldByManifest(_ key: CacheKey) throws -> Bool {
        try database("look up the manifests holding \(key.url)") {
            try pool.read { db in
                try Bool.fetchOne(
                    db, sql: "SELECT EXISTS (SELECT 1 FROM manifestMember WHERE namespace = ? AND url = ?)",
                    arguments: [namespace, key.url]) ?? false
            }
        }
    }

    /// The manifest named `name`, if recorded.
    public func manifest(named name: String) throws -> PageManifest? {
        try manifests().first { $0.name == name }
    }

    /// Removes a manifest; unless `keepingEntries`, also the entries it held that no other
    /// manifest holds. Returns the number of entries removed.
    @discardableResult
    public func removeManifest(named name: String, keepingEntries: Bool = false) throws -> Int {
        let held = try manifest(named: name)?.resources ?? []
        try database("remove the manifest of \(name)") {
            try pool.write { db in
                try db.execute(
                    sql: "DELETE FROM manifest WHERE namespace = ? AND name = ?", arguments: [namespace, name])
            }
        }
        guard !keepingEntries else { return 0 }
        var removed = 0
        for chunk in held.chunked(into: 400) {
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ",")
            removed += try removeWhere(
                "url IN (\(placeholders)) AND \(Self.notInManifest)", StatementArguments(chunk),
                what: "remove the entries of \(name)")
        }
        return removed
    }
}
