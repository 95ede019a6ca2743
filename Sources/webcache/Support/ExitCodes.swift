import ArgumentParser
import Foundation
import HTTPCaching
import WebCache
import WebCacheProxy
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// The exit codes of `webcache` (documented in the README).
enum ExitCodes: Int32 {
    /// Bad arguments or an unreadable configuration (sysexits EX_USAGE).
    case usage = 64
    /// The network failed and nothing usable was cached, or an offline miss (EX_UNAVAILABLE).
    case unavailable = 69
    /// The cache directory cannot be used (EX_CANTCREAT).
    case cacheUnusable = 73
    /// The body could not be written to standard output: a full disk, or a reader that closed
    /// the pipe (EX_IOERR).
    case outputFailed = 74

    /// The command line's one mapping from a failure to its exit code; `nil` for errors that are
    /// not WebCache's (the argument parser reports those itself).
    ///
    /// | failure | exit code |
    /// | --- | --- |
    /// | a configuration that cannot be read or is not valid (`PolicyError`, `ProxyConfigurationError`) | 64 |
    /// | `CacheError.invalidRequest`, `OriginError.invalidRequest` | 64 |
    /// | any other `CacheError` or `OriginError` (offline, origin failed, redirects) | 69 |
    /// | the cache directory or its index (`StoreError`) | 73 |
    static func code(for error: any Error) -> ExitCodes? {
        switch error {
        case let failure as CommandFailure: failure.code
        case is PolicyError, is ProxyConfigurationError: .usage
        case let error as CacheError: error.code == .invalidRequest ? .usage : .unavailable
        case let error as OriginError: error.code == .invalidRequest ? .usage : .unavailable
        case is StoreError: .cacheUnusable
        default: nil
        }
    }
}

/// A failure reported as one line on stderr with a documented exit code.
struct CommandFailure: Error, CustomStringConvertible {
    let code: ExitCodes
    let message: String
    init(_ code: ExitCodes, _ message: String) {
        self.code = code
        self.message = message
    }

    var description: String { message }
}

extension AsyncParsableCommand {
    /// Runs `body`, turning WebCache's failures into one line on stderr and the exit code
    /// ``ExitCodes/code(for:)`` gives.
    func reportingFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            guard let code = ExitCodes.code(for: error) else { throw error }
            let message = "\(error)"
            // A reader that closed the pipe needs no message (`webcache get … | head`).
            if !message.isEmpty { StandardStreams.writeError("webcache: \(message)\n") }
            throw ExitCode(code.rawValue)
        }
    }
}
