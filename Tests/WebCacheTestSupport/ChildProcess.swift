import CChildProcess
import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program a test runs, started with `posix_spawn`.
///
/// Not Foundation's `Process`: on Linux its `run()` lists `/proc/self/fd` to close every
/// descriptor in the child and copies each entry's whole 256-byte name field, reading past the
/// end of the directory buffer when the last entry lies at its end. With the ~1,400 descriptors
/// this suite holds at its peak that buffer fills, and the read went into an unmapped page:
/// the test process died of SIGSEGV in `memcpy` under `Process.run()`, one full run in eight
/// (swift-corelibs-foundation, `findMaximumOpenFromProcSelfFD`). Here the child closes them
/// itself (`posix_spawn_file_actions_addclosefrom_np`).
public final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    public enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A pipe this process reads: ``standardOutput`` or ``standardError``.
        case pipe
        /// Appended to the file at this path, created if missing.
        case file(String)
    }

    /// The child's process identifier.
    public let identifier: pid_t
    /// The reading end of the child's standard output, when it goes to a ``Stream/pipe``.
    public let standardOutput: FileHandle?
    /// The reading end of the child's standard error, when it goes to a ``Stream/pipe``.
    public let standardError: FileHandle?
    /// How it ended, once known: its exit code, or 128 plus the signal that ended it.
    private let ending = NIOLockedValueBox<Int32?>(nil)

    /// Starts `executable` with `arguments`, this process's environment and its standard input
    /// from `/dev/null`.
    public init(_ executable: String, _ arguments: [String], output: Stream = .null, error: Stream = .null) throws {
        var opened: [Int32] = []
        defer { for descriptor in opened { close(descriptor) } }
        func descriptor(for stream: Stream) throws -> (child: Int32, reading: FileHandle?) {
            switch stream {
            case .null:
                return (-1, nil)
            case .pipe:
                var ends: [Int32] = [-1, -1]
                guard pipe(&ends) == 0 else { throw Self.failure("pipe", errno) }
                _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
                opened.append(ends[1])
                return (ends[1], FileHandle(fileDescriptor: ends[0], closeOnDealloc: true))
            case .file(let path):
                let file = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
                guard file >= 0 else { throw Self.failure("open \(path)", errno) }
                opened.append(file)
                return (file, nil)
            }
        }
        let (outputDescriptor, outputReading) = try descriptor(for: output)
        let (errorDescriptor, errorReading) = try descriptor(for: error)
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        var identifier = pid_t()
        let result = Self.withCStrings([executable] + arguments) { argv in
            Self.withCStrings(environment) { envp in
                webcache_test_spawn(&identifier, executable, argv, envp, -1, outputDescriptor, errorDescriptor)
            }
        }
        guard result == 0 else { throw Self.failure("spawn \(executable)", result) }
        self.identifier = identifier
        self.standardOutput = outputReading
        self.standardError = errorReading
    }

    /// Whether the child has not ended yet.
    public var isRunning: Bool { exitStatus() == nil }

    /// Sends SIGTERM, unless the child has ended (its identifier may then be another's).
    public func terminate() {
        ending.withLockedValue { ending in
            if ending == nil && Self.reap(identifier, into: &ending) == nil { kill(identifier, SIGTERM) }
        }
    }

    /// Blocks until the child ends and returns its exit code, or 128 plus the signal that ended
    /// it. Use it from ``onOwnThread(_:)`` in async code.
    @discardableResult
    public func waitUntilExit() -> Int32 {
        while true {
            if let status = exitStatus() { return status }
            usleep(5_000)
        }
    }

    /// The exit code (or 128 plus the signal) once the child has ended, `nil` while it runs.
    public func exitStatus() -> Int32? {
        ending.withLockedValue { ending in ending ?? Self.reap(identifier, into: &ending) }
    }

    /// Collects the child's end without blocking, if it has come.
    private static func reap(_ identifier: pid_t, into ending: inout Int32?) -> Int32? {
        var status: Int32 = 0
        let reaped = waitpid(identifier, &status, WNOHANG)
        guard reaped == identifier else { return nil }
        let signal = status & 0x7f
        ending = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return ending
    }

    private static func withCStrings<Result>(
        _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result
    ) -> Result {
        let copies = strings.map { strdup($0) } + [nil]
        defer { for copy in copies { free(copy) } }
        return body(copies)
    }

    private static func failure(_ what: String, _ code: Int32) -> NSError {
        NSError(
            domain: NSPOSIXErrorDomain, code: Int(code),
            userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(code)))"])
    }
}
