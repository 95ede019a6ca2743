import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes to standard output and standard error with `write(2)`, not Foundation's
/// `FileHandle.write(_:)`, which ends the process with a fatal error when a write fails: a
/// reader that closes the pipe (`webcache get … | head`) crashed `get` with a backtrace.
enum StandardStreams {
    /// Writes all of `bytes` to standard output. A reader that has closed the pipe ends the
    /// command quietly (``ExitCodes/outputFailed``, no message, as `head` expects of a writer);
    /// any other failure (a full disk) says what went wrong with the same code.
    static func writeOutput(_ bytes: Data) throws {
        let failure = bytes.withUnsafeBytes { writeAll(STDOUT_FILENO, $0) }
        guard let failure else { return }
        throw CommandFailure(
            .outputFailed,
            failure == EPIPE ? "" : "cannot write to standard output: \(String(cString: strerror(failure)))")
    }

    /// Writes `text` to standard error; a failure is ignored, as nothing is left to tell.
    static func writeError(_ text: String) {
        _ = Data(text.utf8).withUnsafeBytes { writeAll(STDERR_FILENO, $0) }
    }

    /// Writes every byte of `buffer` to `descriptor`; the `errno` of a failure, `nil` on success.
    private static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += written
        }
        return nil
    }
}
