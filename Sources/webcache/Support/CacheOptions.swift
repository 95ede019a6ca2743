import ArgumentParser
import Foundation
import HTTPCaching
import Logging
import WebCache
import WebCacheNIO
import WebCacheStore
import WebCacheYAML

/// Options every command takes: where the cache is and which rules apply.
struct CacheOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The cache directory (default: $WEBCACHE_DIR, else the platform's cache directory).", valueName: "dir"))
    var cacheDir: String?

    @Option(
        help: ArgumentHelp(
            "A YAML file with the cache policy (lifetimes, allow and block lists, offline use).", valueName: "file"))
    var config: String?

    @Option(
        help: ArgumentHelp(
            "The most the cache keeps on disk (\(ByteCount.help)); past it the least recently used entries go. Recorded in the cache directory for later commands that name none (default: the configuration file's, else the recorded one, else 512m).",
            valueName: "size"))
    var diskCapacity: ByteCount?

    @Option(
        help: ArgumentHelp(
            "The most this process keeps in memory of the cache's entries (\(ByteCount.help); default: the configuration file's, else 32m).",
            valueName: "size"))
    var memoryCapacity: ByteCount?

    /// The directory in use.
    var directory: URL {
        if let cacheDir { return URL(fileURLWithPath: cacheDir) }
        if let fromEnvironment = ProcessInfo.processInfo.environment["WEBCACHE_DIR"], !fromEnvironment.isEmpty {
            return URL(fileURLWithPath: fromEnvironment)
        }
        #if os(Linux)
        let base =
            ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("webcache")
        #else
        return FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0].appendingPathComponent(
            "WebCache")
        #endif
    }

    func policy() throws -> CachePolicy {
        guard let config else { return CachePolicy() }
        return try CachePolicy.load(from: URL(fileURLWithPath: config))
    }

    func storage() throws -> StorageSettings {
        guard let config else { return StorageSettings() }
        return try StorageSettings.parse(configurationText(config), source: config)
    }

    /// The `cacert` files the configuration file names.
    func configuredCACertificates() throws -> [String] {
        guard let config else { return [] }
        return try ConfigurationFile.certificateAuthorityFiles(
            in: configurationText(config), source: config,
            directory: URL(fileURLWithPath: config).deletingLastPathComponent())
    }

    /// The configuration file's text, or an error naming it.
    private func configurationText(_ config: String) throws -> String {
        do {
            return try String(contentsOfFile: config, encoding: .utf8)
        } catch {
            throw PolicyError(
                .unreadableFile, "cannot read the configuration file \(config): \(error.localizedDescription)")
        }
    }

    /// The folder of this cache's certificate authority (for HTTPS interception).
    var certificateAuthorityFolder: URL { directory.appendingPathComponent("ca") }

    static var quietLogger: Logger {
        var logger = Logger(label: "webcache")
        logger.logLevel = .error
        return logger
    }

    /// For a long-running command (the proxy): the cache's warnings — a full disk, a corrupt
    /// body or index — reach standard error, at most 20 a minute.
    static var serviceLogger: Logger {
        var logger = Logger(label: "webcache") { RateLimitedLogHandler(label: $0) }
        logger.logLevel = .warning
        return logger
    }

    /// The store's configuration: the configuration file's `storage` settings, then the
    /// capacities given as options. The disk capacity comes from `--disk-capacity` (and is
    /// recorded in the directory), else the configuration file, else what an earlier command
    /// recorded, else the store's default.
    func storeConfiguration(logger: Logger = Self.quietLogger) throws -> CacheStore.Configuration {
        var configuration = CacheStore.Configuration(directory: directory)
        configuration.logger = logger
        let settings = try storage()
        try settings.apply(to: &configuration)
        if let diskCapacity {
            configuration.diskCapacity = diskCapacity.bytes
            try RecordedDiskCapacity.record(diskCapacity.bytes, in: configuration.directory)
        } else if settings.diskCapacity == nil, let recorded = RecordedDiskCapacity.read(in: configuration.directory) {
            configuration.diskCapacity = recorded
        }
        if let memoryCapacity { configuration.memoryCapacity = memoryCapacity.bytes }
        return configuration
    }

    /// Opens the store, or fails with a one-line message.
    func openStore() throws -> CacheStore {
        let configuration = try storeConfiguration()
        do {
            return try CacheStore(configuration: configuration)
        } catch {
            throw CommandFailure(.cacheUnusable, "cannot open the cache at \(directory.path): \(error)")
        }
    }
}

/// Parses an absolute http(s) URL argument.
func parseURL(_ text: String) throws -> URL {
    guard let url = URL(string: text), HTTPURLs.isAbsoluteHTTP(url) else {
        throw ValidationError("'\(text)' is not an absolute http(s) URL")
    }
    return url
}

/// `1.2 KB`, `3.4 MB`.
func formatBytes(_ bytes: Int) -> String {
    switch bytes {
    case ..<1024: return "\(bytes) B"
    case ..<(1 << 20): return String(format: "%.1f KB", Double(bytes) / 1024)
    case ..<(1 << 30): return String(format: "%.1f MB", Double(bytes) / 1_048_576)
    default: return String(format: "%.2f GB", Double(bytes) / 1_073_741_824)
    }
}

/// `42 s`, `5 min`, `3 h`, `2 d`.
func formatSeconds(_ seconds: Int) -> String {
    switch abs(seconds) {
    case ..<120: return "\(seconds) s"
    case ..<7200: return "\(seconds / 60) min"
    case ..<172_800: return "\(seconds / 3600) h"
    default: return "\(seconds / 86_400) d"
    }
}

/// Prints rows as an aligned table.
func printTable(_ header: [String], _ rows: [[String]]) {
    var widths = header.map(\.count)
    for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { index, cell in
            index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
        }.joined(separator: "  ")
    }
    print(line(header))
    for row in rows { print(line(row)) }
}
