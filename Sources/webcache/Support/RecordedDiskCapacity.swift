import Foundation

/// The disk capacity a command was given with `--disk-capacity`, kept in the cache directory
/// (`disk-capacity`, the bytes in decimal) so that later commands on the same directory that
/// name none — a `webcache get` beside a proxy, say — keep the cache at that size rather than
/// trim it to the default.
enum RecordedDiskCapacity {
    static let fileName = "disk-capacity"

    /// The capacity recorded in `directory`: `nil` when none is; a file that is not a number is
    /// reported on standard error and ignored.
    static func read(in directory: URL) -> Int? {
        let file = directory.appendingPathComponent(fileName)
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        guard let bytes = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes >= 0 else {
            StandardStreams.writeError(
                "webcache: ignoring \(file.path): not a number of bytes (run a command with --disk-capacity to replace it)\n"
            )
            return nil
        }
        return bytes
    }

    /// Records `bytes` in `directory` (made if missing), replacing the file whole.
    static func record(_ bytes: Int, in directory: URL) throws {
        let file = directory.appendingPathComponent(fileName)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data("\(bytes)\n".utf8).write(to: file, options: .atomic)
        } catch {
            throw CommandFailure(
                .cacheUnusable, "cannot record the disk capacity in \(file.path): \(error.localizedDescription)")
        }
    }
}
