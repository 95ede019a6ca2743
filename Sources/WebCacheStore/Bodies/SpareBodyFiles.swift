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
/// Spare files are this process's: at most ``capacity`` (1,024 unless said; an emptied one makes
/// room for one that keeps its bytes), holding at most ``byteLimit`` bytes in all and no more
/// than the index leaves free under the disk capacity (a file past either is emptied first).
/// Their bytes count as used (``bytesHeld()``), so the directory stays within its disk
/// capacity, and go before any entry: past the capacity, spare files are deleted before an entry
/// is evicted (``shed(atLeast:)``), so they never cost the cache a stored response. A store
/// deletes its spare files when it is let go and when the process exits normally; a process
/// killed outright leaves them as bodies without a row, which the next process alone in the
/// directory deletes (recovery).
final class SpareBodyFiles: Sendable {
    /// The most spare files kept.
    let capacity: Int
    /// The most bytes the spare files hold in all.
    let byteLimit: Int
    /// The most bytes a store keeps in spare files: what one trim takes off (the capacity less
    /// its ``CacheStore/Configuration/trimRatio``), so that every file a full cache evicts at
    /// once keeps its bytes for the bodies that follow, and at least a sixteenth of the capacity.
    static func byteLimit(for configuration: CacheStore.Configuration) -> Int {
        max(configuration.diskCapacity / 16, configuration.diskCapacity - configuration.trimTarget)
    }

    private struct Spare {
        var name: String
        var size: Int
    }

    /// The spare files, and the bytes they hold. Files that still hold bytes are taken before
    /// emptied ones: a body written over a file's bytes reuses its blocks and its pages in the
    /// page cache, where an emptied file needs both found again. (Taken from one stack, the
    /// files kept whole sank below a steady stream of emptied ones and held the byte limit
    /// unused, so that nearly every later file was emptied: 2,125 of 2,129 in a full 64 MiB
    /// cache of 1 MB bodies, 6,880 of 9,146 in a 512 MiB one of 128 KB bodies.)
    private struct Pool {
        var holding: [Spare] = []
        var emptied: [Spare] = []
        /// Given up, to be deleted after the transaction that gave them up (not spares any more).
        var shed: [Spare] = []
        var bytes = 0

        var all: [Spare] { holding + emptied }
        var count: Int { holding.count + emptied.count }

        mutating func add(_ spare: Spare) {
            if spare.size > 0 { holding.append(spare) } else { emptied.append(spare) }
            bytes += spare.size
        }

        /// Takes out the spare that has held its bytes longest (it is not taken meanwhile).
        mutating func oldestHolding() -> Spare? {
            guard !holding.isEmpty else { return nil }
            let spare = holding.removeFirst()
            bytes -= spare.size
            return spare
        }

        /// Takes out the spare that has been empty longest.
        mutating func oldestEmptied() -> Spare? {
            emptied.isEmpty ? nil : emptied.removeFirst()
        }

        mutating func next() -> Spare? {
            guard let spare = holding.popLast() ?? emptied.popLast() else { return nil }
            bytes -= spare.size
            return spare
        }

        /// Places held by files on their way in (renamed outside the lock), and the bytes
        /// they keep: counted with the spares, so that recycling at once on several threads
        /// keeps within the count and byte limits.
        var reserved = 0
        var reservedBytes = 0
        /// What the index leaves free under the capacity: noted when the store last decided
        /// what to evict, grown by each file recycled since (its entry's bytes left the index).
        /// Spare files hold no more.
        var room = Int.max

        /// Holds a place for a removed entry's file of `size` bytes, which grows the ``room``
        /// by as much: among at most `capacity` files (an emptied spare, handed back to be
        /// deleted, makes way when they are all taken), keeping its bytes when they fit under
        /// `byteLimit` and the room. `nil` when every place holds bytes.
        mutating func reserve(size: Int, capacity: Int, byteLimit: Int) -> Place? {
            room = room > Int.max - size ? Int.max : room + size
            var madeWay: Spare?
            if count + reserved >= capacity {
                guard let emptied = oldestEmptied() else { return nil }
                madeWay = emptied
            }
            let kept = bytes + reservedBytes + size <= min(byteLimit, room) ? size : 0
            reserved += 1
            reservedBytes += kept
            return Place(keptBytes: kept, madeWay: madeWay)
        }

        /// Gives back a place whose file did not come in.
        mutating func release(_ place: Place) {
            reserved -= 1
            reservedBytes -= place.keptBytes
        }

        /// Takes out every spare file, those given up included. Places held by files on their
        /// way in stay held: their recycling still gives them back or fills them.
        mutating func takeAll() -> [Spare] {
            defer {
                holding = []
                emptied = []
                shed = []
                bytes = 0
            }
            return all + shed
        }

        /// Puts the file that held `place` in it.
        mutating func fill(_ place: Place, with spare: Spare) {
            release(place)
            add(spare)
        }
    }

    /// A place among the spare files held for one being recycled.
    private struct Place {
        /// The bytes the file may keep: all of them, or none (it is emptied).
        var keptBytes: Int
        /// The emptied spare that gave up its place, to be deleted.
        var madeWay: Spare?
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
        guard let folder = name.lastIndex(of: "/") else { return false }
        let path = files.path(name)
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        // The exclusive lock is held until the file has left `name`: a reader that opens it
        // meanwhile fails to take its shared lock, and one that takes it later finds the name
        // no longer names the file.
        defer { POSIX.closeFile(fd) }
        guard POSIX.lock(fd, exclusive: true, wait: false), let size = try? POSIX.size(of: fd) else { return false }
        // Whether the file is kept, and with its bytes, is decided in one step under the
        // pool's lock, and its place held until it is in: files recycled at once on several
        // threads cannot pass the limits between a check and an add.
        guard let place = pool.withLock({ $0.reserve(size: size, capacity: capacity, byteLimit: byteLimit) }) else {
            return false
        }
        if let madeWay = place.madeWay { POSIX.unlinkIfPresent(files.path(madeWay.name)) }
        let unique = { BodyFiles.hex(UInt64.random(in: 0...UInt64.max)) }
        let spareName = "\(name[..<folder])/\(unique())-\(unique())\(BodyFiles.bodySuffix)"
        // A file that may not keep its bytes is emptied. Truncating to nothing makes ext4 write
        // the file back when it is next closed after a write (its `auto_da_alloc`); this
        // descriptor is that close, with nothing to write.
        guard place.keptBytes == size || ftruncate(fd, 0) == 0, rename(path, files.path(spareName)) == 0 else {
            pool.withLock { $0.release(place) }
            return false
        }
        pool.withLock { $0.fill(place, with: Spare(name: spareName, size: place.keptBytes)) }
        return true
    }

    /// Notes the bytes the index leaves free under the capacity (below zero when it is past it),
    /// which files recycled from now on may keep (with ``byteLimit``; each recycled file adds
    /// its own bytes to it).
    func room(_ bytes: Int) {
        pool.withLock { $0.room = bytes }
    }

    /// Gives up spare files that hold bytes, the longest kept first, until at least `bytes` are
    /// freed or none holds any, and returns the bytes freed. The store calls it inside the
    /// transaction that decides what to evict: spare bytes are worth less than a stored
    /// response, so they are given up first. The files leave the pool (and its bytes) at once,
    /// and are deleted by ``deleteShed(in:)`` after the commit, so the transaction does no file
    /// work.
    @discardableResult
    func shed(atLeast bytes: Int) -> Int {
        pool.withLock { pool in
            var freed = 0
            while freed < bytes, let spare = pool.oldestHolding() {
                freed += spare.size
                pool.shed.append(spare)
            }
            return freed
        }
    }

    /// Deletes the files ``shed(atLeast:)`` gave up.
    func deleteShed(in files: BodyFiles) {
        let shed = pool.withLock { pool -> [Spare] in
            defer { pool.shed = [] }
            return pool.shed
        }
        for spare in shed { POSIX.unlinkIfPresent(files.path(spare.name)) }
    }

    /// Deletes every spare file (the store is going away, or the process is exiting).
    func deleteAll(in files: BodyFiles) {
        let spares = pool.withLock { $0.takeAll() }
        for spare in spares { POSIX.unlinkIfPresent(files.path(spare.name)) }
    }

    /// How many spare files there are.
    func count() -> Int {
        pool.withLock { $0.count }
    }

    /// The bytes the spare files hold.
    func bytesHeld() -> Int {
        pool.withLock { $0.bytes }
    }

    /// The spare files' names.
    func names() -> [String] {
        pool.withLock { $0.all.map(\.name) }
    }

    private func next() -> Spare? {
        pool.withLock { $0.next() }
    }
}
