import Foundation

/// A fresh directory under the system's temporary directory, removed by ``remove()``.
public struct TemporaryDirectory: Sendable {
    /// The directory.
    public let url: URL

    /// Creates a new, empty directory whose name starts with `prefix`.
    public init(prefix: String = "webcache-test") throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Deletes the directory and everything in it. A file the store removes itself while this
    /// walks the tree (a temporary body file let go) fails the walk: it is tried again, so that
    /// no test leaves its cache behind.
    public func remove() {
        for _ in 0..<5 {
            if (try? FileManager.default.removeItem(at: url)) != nil { return }
            if !FileManager.default.fileExists(atPath: url.path) { return }
        }
    }

    /// Runs `body` with a fresh directory and removes it afterwards.
    public static func with<Result>(_ body: (URL) async throws -> Result) async throws -> Result {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        return try await body(directory.url)
    }
}

/// The body files (and leftover temporary files) of the cache store in `directory`.
public func bodyFiles(in directory: URL) -> [URL] {
    let enumerator = FileManager.default.enumerator(
        at: directory.appendingPathComponent("bodies"), includingPropertiesForKeys: nil)
    return (enumerator?.allObjects as? [URL] ?? []).filter {
        !$0.hasDirectoryPath && ($0.pathExtension == "body" || $0.pathExtension == "tmp")
    }
}
