import HTTPCaching

#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Removed entries' body files kept for new bodies: a removed entry's file is renamed in its
/// folder instead of being deleted, and the next body written takes it under that new name and
/// writes over it. A cache that is full evicts about as many files as it stores, so it then
/// stores without creating or deleting a file, and mostly without freeing and allocating its
/// blocks. On ext4 without a journal, where a new file's inode is searched for past every
/// recently deleted one, that is most of what storing a large body costs (`body-write-floor`:
/// 86 against 391 µs a 128 KB body); with a journal it costs what a new file does (96 against
/// 100), as one rename in a folder costs about what creating and deleting a file do.
///
/// A file is recycled only when nobody has it open for reading: every reader of a body file
/// holds a shared `flock` on it (``POSIX/openBodyForReading(_:)``), and recycling needs the
/// exclusive one, without waiting. A file some answer or process is still reading is deleted as
/// before, so its bytes stay what they were. The new name is one no row has: a reader that
/// looked the entry up before its removal finds nothing at the old name, and nothing finds the
/// new one until the next body's row names it.
///
/// Spare files are this process's: at most ``capacity`` (1,024 unless said), holding at most
/// ``byteLimit`` bytes in all (a file past it is emptied first), counted as used when the store
/// decides what to evict (``bytesHeld()``), so the directory stays within its disk capacity. A
/// store deletes its spare files when it is let go and when the process exits normally; a
/// process killed outright leaves them as bodies without a row, which the next process alone in
/// the directory deletes (recovery).
final class SpareBodyFiles: Sendable {
    /// The most spare files kept.
    let capacity: Int
    /// The most bytes the spare files hold in all.
    let byteLimit: Int
    /// The most bytes a store keeps in spare files, whatever its capacity (a sixteenth of it
    /// below 1 GiB).
    static let largestByteLimit = 64 << 20

    private struct Spare {
        var name: String
        var size: Int
    }

    /// The spare files, and the bytes they hold.
    private struct Pool {
        var spares: [Spare] = []
        var bytes = 0
    }

    private let pool = Locked(Pool())

    init(capacity: Int = 1024, byteLimit: Int) {
        self.capacity = capacity
        self.byteLimit = max(0, byteLimit)
    }

    /// A spare file opened for reading and writing at its start, under the name the new body
    /// takes, with the bytes it still holds (to be written over; the writer cuts off what is
    /// left past its body with ``fit(_:to:holding:)``), or `nil` when there is none.
    func take(in files: BodyFiles) -> (name: String, descriptor: Int32, size: Int)? {
        while let spare = next() {
            let fd = open(files.path(spare.name), O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { continue }  // removed behind the store's back
            return (spare.name, fd, spare.size)
        }
        return nil
    }

    /// Cuts a body file that held `held` bytes (a taken spare file) or had blocks for them
    /// (``BodyWriter/expect(size:)``) down to the `size` bytes of the body written into it.
    static func fit(_ fd: Int32, to size: Int, holding held: Int) throws {
        guard held > size else { return }
        guard ftruncate(fd, off_t(size)) == 0 else {
            throw StoreError(.ioFailure, "cannot cut a body file to \(size) bytes: \(POSIX.errorText())")
        }
    }

    /// Keeps the removed entry's body file `name` as a spare under a new name in its folder
    /// (emptied first when the spare files would hold more than ``byteLimit``). `false` when it
    /// is not kept — someone is reading it, it is gone, enough are kept already, or a step
    /// failed — and the caller deletes it.
    func recycle(_ name: String, in files: BodyFiles) -> Bool {
        guard count() < capacity, let folder = name.lastIndex(of: "/") else { return false }
        let path = files.path(name)
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        // The exclusive lock is held until the file has left `name`: a reader that opens it
        // meanwhile fails to take its shared lock, and one that takes it later finds the name
        // no longer names the file.
        defer { POSIX.closeFile(fd) }
        guard POSIX.lock(fd, exclusive: true, wait: false), var size = try? POSIX.size(of: fd) else { return false }
        if bytesHeld() + size > byteLimit {
            // Truncating to nothing makes ext4 write the file back when it is next closed after
            // a write (its `auto_da_alloc`); this descriptor is that close, with nothing to write.
            guard ftruncate(fd, 0) == 0 else { return false }
            size = 0
        }
        let unique = { BodyFiles.hex(UInt64.random(in: 0...UInt64.max)) }
        let spareName = "\(name[..<folder])/\(unique())-\(unique())\(BodyFiles.bodySuffix)"
        guard rename(path, files.path(spareName)) == 0 else { return false }
        pool.withLock {
            $0.spares.append(Spare(name: spareName, size: size))
            $0.bytes += size
        }
        return true
    }

    /// Deletes every spare file (the store is going away, or the process is exiting).
    func deleteAll(in files: BodyFiles) {
        let spares = pool.withLock { pool -> [Spare] in
            defer { pool = Pool() }
            return pool.spares
        }
        for spare in spares { POSIX.unlinkIfPresent(files.path(spare.name)) }
    }

    /// How many spare files there are.
    func count() -> Int {
        pool.withLock { $0.spares.count }
    }

    /// The bytes the spare files hold.
    func bytesHeld() -> Int {
        pool.withLock { $0.bytes }
    }

    /// The spare files' names.
    func names() -> [String] {
        pool.withLock { $0.spares.map(\.name) }
    }

    private func next() -> Spare? {
        pool.withLock { pool in
            guard let spare = pool.spares.popLast() else { return nil }
            pool.bytes -= spare.size
            return spare
        }
    }
}
