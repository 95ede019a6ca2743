import HTTPCaching

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Removed entries' body files kept for new bodies: a removed entry's file is moved to `spare/`
/// instead of being deleted, and the next body written takes it back and writes over it. A
/// cache that is full evicts about as many files as it stores, so it then stores without
/// creating or deleting a file, and mostly without freeing and allocating its blocks: on some
/// file systems (ext4 without a journal, where a new file's inode is searched for past every
/// recently deleted one, and where freed blocks are discarded on the device before the call
/// returns) that is most of what storing a large body costs.
///
/// A file is recycled only when nobody has it open for reading: every reader of a body file
/// holds a shared `flock` on it (``POSIX/openBodyForReading(_:)``), and recycling needs the
/// exclusive one, without waiting. A file some answer or process is still reading is deleted as
/// before, so its bytes stay what they were. Each process keeps at most ``capacity`` spare files
/// (1,024 unless said) holding at most ``byteLimit`` bytes in all (a file past it is emptied
/// first); the store counts those bytes as used when it decides what to evict
/// (``bytesHeld``), so the directory stays within its disk capacity.
final class SpareBodyFiles: Sendable {
    /// The most spare files this process keeps.
    let capacity: Int
    /// The most bytes this process's spare files hold in all.
    let byteLimit: Int
    /// The most bytes a store keeps in spare files, whatever its capacity (a sixteenth of it
    /// below 1 GiB).
    static let largestByteLimit = 64 << 20
    /// Where they are: `spare/` in the store's directory.
    let directory: String

    private struct Spare {
        var name: String
        var size: Int
    }

    /// The spare files this process knows of, and the bytes they hold.
    private struct Pool {
        var spares: [Spare] = []
        var bytes = 0

        mutating func add(_ spare: Spare) {
            spares.append(spare)
            bytes += spare.size
        }

        mutating func takeLast() -> Spare? {
            guard let spare = spares.popLast() else { return nil }
            bytes -= spare.size
            return spare
        }
    }

    /// Listed once on first use, then kept up to date. A name another process took meanwhile
    /// fails to move and is dropped.
    private let pool = Locked<Pool?>(nil)

    init(storeDirectory: String, capacity: Int = 1024, byteLimit: Int) {
        directory = "\(storeDirectory)/spare"
        self.capacity = capacity
        self.byteLimit = max(0, byteLimit)
    }

    /// A spare file moved to `path` (where a new body is written) and opened for reading and
    /// writing at its start, with the bytes it still holds (to be written over; the writer cuts
    /// off what is left past its body with ``fit(_:to:holding:)``), or `nil` when there is none
    /// to take. `makeDirectories` makes the directories `path` needs when they are missing.
    func take(to path: String, makeDirectories: () throws -> Void) -> (descriptor: Int32, size: Int)? {
        while let spare = next() {
            let source = "\(directory)/\(spare.name)"
            var moved = rename(source, path) == 0
            if !moved && errno == ENOENT && (try? makeDirectories()) != nil {
                moved = rename(source, path) == 0
            }
            guard moved else { continue }  // another process took it
            let fd = open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0, let size = try? POSIX.size(of: fd) else {
                if fd >= 0 { POSIX.closeFile(fd) }
                POSIX.unlinkIfPresent(path)  // the caller makes a new file there
                return nil
            }
            return (fd, size)
        }
        return nil
    }

    /// Cuts a taken spare file that held `held` bytes down to the `size` bytes of the body
    /// written into it.
    static func fit(_ fd: Int32, to size: Int, holding held: Int) throws {
        guard held > size else { return }
        guard ftruncate(fd, off_t(size)) == 0 else {
            throw StoreError(.ioFailure, "cannot cut a body file to \(size) bytes: \(POSIX.errorText())")
        }
    }

    /// Keeps the removed body file at `path` as a spare (emptied first when the spare files
    /// would hold more than ``byteLimit``). `false` when it is not kept — someone is reading it,
    /// it is gone, enough are kept already, or a step failed — and the caller deletes it.
    func recycle(_ path: String) -> Bool {
        guard count() < capacity else { return false }
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        // The exclusive lock is held until the file has left `path`: a reader that opens it
        // meanwhile fails to take its shared lock, and one that takes it later finds the
        // path no longer names the file.
        defer { POSIX.closeFile(fd) }
        guard POSIX.lock(fd, exclusive: true, wait: false), var size = try? POSIX.size(of: fd) else { return false }
        if bytesHeld() + size > byteLimit {
            // Truncating to nothing makes ext4 write the file back when it is next closed after
            // a write (its `auto_da_alloc`); this descriptor is that close, with nothing to write.
            guard ftruncate(fd, 0) == 0 else { return false }
            size = 0
        }
        let name = BodyFiles.hex(UInt64.random(in: 0...UInt64.max))
        var moved = rename(path, "\(directory)/\(name)") == 0
        if !moved && errno == ENOENT && (try? POSIX.makeDirectory(directory)) != nil {
            moved = rename(path, "\(directory)/\(name)") == 0
        }
        guard moved else { return false }
        withPool { $0.add(Spare(name: name, size: size)) }
        return true
    }

    /// How many spare files this process knows of.
    func count() -> Int {
        withPool { $0.spares.count }
    }

    /// The bytes this process's spare files hold.
    func bytesHeld() -> Int {
        withPool { $0.bytes }
    }

    private func next() -> Spare? {
        withPool { $0.takeLast() }
    }

    private func withPool<Result>(_ body: (inout Pool) -> Result) -> Result {
        pool.withLock { pool in
            if pool == nil { pool = Self.listed(directory) }
            return body(&pool!)
        }
    }

    /// The spare files in `directory`: names of 16 hexadecimal digits (anything else is not
    /// ours and is left alone), with their sizes.
    private static func listed(_ directory: String) -> Pool {
        var pool = Pool()
        for name in POSIX.list(directory) {
            guard name.utf8.count == 16, name.utf8.allSatisfy({ BodyFiles.isHexDigit($0) }) else { continue }
            var info = stat()
            guard stat("\(directory)/\(name)", &info) == 0 else { continue }
            pool.add(Spare(name: name, size: Int(info.st_size)))
        }
        return pool
    }
}
