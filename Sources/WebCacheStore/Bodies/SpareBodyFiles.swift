import HTTPCaching

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Emptied body files kept for new bodies: a removed entry's file is truncated and moved to
/// `spare/` instead of being deleted, and the next body written takes it back. A cache that is
/// full evicts about as many files as it stores, so it then stores without creating or
/// deleting a file: on some file systems (ext4 without a journal, where a new file's inode is
/// searched for past every recently deleted one) that is most of what storing a large body
/// costs.
///
/// A file is recycled only when nobody has it open for reading: every reader of a body file
/// holds a shared `flock` on it (``POSIX/openBodyForReading(_:)``), and recycling needs the
/// exclusive one, without waiting. A file some answer or process is still reading is deleted as
/// before, so its bytes stay what they were. A spare file holds no data (no disk space counts
/// against the capacity); each process keeps at most ``capacity`` (1,024 unless said).
final class SpareBodyFiles: Sendable {
    /// The most spare files this process keeps.
    let capacity: Int
    /// Where they are: `spare/` in the store's directory.
    let directory: String
    /// Spare files this process knows of: listed once on first use, then kept up to date. A name
    /// another process took meanwhile fails to move and is dropped.
    private let names = Locked<[String]?>(nil)

    init(storeDirectory: String, capacity: Int = 1024) {
        directory = "\(storeDirectory)/spare"
        self.capacity = capacity
    }

    /// Moves a spare file to `path` (where a new body is written) and opens it, empty, for
    /// reading and writing; `nil` when there is none to take. `makeDirectories` makes the
    /// directories `path` needs when they are missing.
    func take(to path: String, makeDirectories: () throws -> Void) -> Int32? {
        while let name = nextName() {
            var moved = rename("\(directory)/\(name)", path) == 0
            if !moved && errno == ENOENT && (try? makeDirectories()) != nil {
                moved = rename("\(directory)/\(name)", path) == 0
            }
            guard moved else { continue }  // another process took it
            let fd = open(path, O_RDWR | O_TRUNC | O_CLOEXEC)
            guard fd >= 0 else { return nil }
            return fd
        }
        return nil
    }

    /// Empties the removed body file at `path` and keeps it as a spare. `false` when it is not
    /// kept — someone is reading it, it is gone, enough are kept already, or a step failed —
    /// and the caller deletes it as before.
    func recycle(_ path: String) -> Bool {
        guard count() < capacity else { return false }
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        // The exclusive lock is held until the file has left `path`: a reader that opens it
        // meanwhile fails to take its shared lock, and one that takes it later finds the
        // path no longer names the file.
        defer { POSIX.closeFile(fd) }
        guard POSIX.lock(fd, exclusive: true, wait: false), ftruncate(fd, 0) == 0 else { return false }
        let name = BodyFiles.hex(UInt64.random(in: 0...UInt64.max))
        var moved = rename(path, "\(directory)/\(name)") == 0
        if !moved && errno == ENOENT && (try? POSIX.makeDirectory(directory)) != nil {
            moved = rename(path, "\(directory)/\(name)") == 0
        }
        guard moved else { return false }
        names.withLock { $0?.append(name) }
        return true
    }

    /// How many spare files this process knows of.
    func count() -> Int {
        names.withLock { names in
            if names == nil { names = Self.listed(directory) }
            return names?.count ?? 0
        }
    }

    private func nextName() -> String? {
        names.withLock { names in
            if names == nil { names = Self.listed(directory) }
            return names?.popLast()
        }
    }

    /// The spare files in `directory`: names of 16 hexadecimal digits (anything else is not
    /// ours and is left alone).
    private static func listed(_ directory: String) -> [String] {
        POSIX.list(directory).filter { name in
            name.utf8.count == 16 && name.utf8.allSatisfy { BodyFiles.isHexDigit($0) }
        }
    }
}
