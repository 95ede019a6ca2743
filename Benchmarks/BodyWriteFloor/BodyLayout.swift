#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One way of laying bodies out on disk, with its files open and its eviction queue
/// (see ``BodyWriteFloor``).
struct BodyLayout {
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case files, spares, segments, ring
        var description: String { rawValue }
    }

    static let segmentSize = 64 << 20
    /// The piece a body is written in, as a socket read would hand it over.
    static let pieceSize = 64 << 10
    private static let piece = [UInt8](repeating: 0x5a, count: pieceSize)

    let kind: Kind
    let folder: String
    let capacity: Int
    /// Bodies (or segments) kept, oldest first, and their bytes.
    private var kept: [(path: String, size: Int)] = []
    private var keptHead = 0
    private var keptBytes = 0
    private var written = 0
    /// `spares`: evicted bodies' files, kept for new bodies instead of unlinked, with the bytes
    /// each still holds.
    private var spares: [(path: String, size: Int)] = []
    private var spareBytes = 0
    /// The segment being written, and where the next body goes in it.
    private var segment: Int32 = -1
    private var segmentIndex = -1
    private var offset = 0

    init(kind: Kind, folder: String, capacity: Int) throws {
        self.kind = kind
        self.folder = folder
        self.capacity = capacity
        try Self.makeFolder(folder)
        switch kind {
        case .files, .spares:
            for index in 0..<256 { try Self.makeFolder("\(folder)/\(hex(index))") }
        case .segments:
            try startSegment(0)
        case .ring:
            // Every segment written once and synced, so its blocks are allocated (not counted).
            for index in 0..<(capacity / Self.segmentSize) {
                let fd = try Self.open(segmentPath(index), flags: O_WRONLY | O_CREAT)
                for start in stride(from: 0, to: Self.segmentSize, by: Self.pieceSize) {
                    try Self.write(fd, at: start)
                }
                fsync(fd)
                closeDescriptor(fd)
            }
            try openRingSegment(0)
        }
    }

    /// Writes one body of `size` bytes, making room first-in first-out.
    mutating func write(size: Int) throws {
        switch kind {
        case .files, .spares:
            let fd: Int32
            let name: String
            if let spare = spares.popLast() {
                // An evicted body's file, renamed when it was kept: written over under that name
                // (what is left of the old body cut off).
                spareBytes -= spare.size
                name = spare.path
                fd = try Self.open(name, flags: O_RDWR)
                _ = flock(fd, LOCK_SH)
                _ = try Self.writeBody(fd, at: 0, size: size)
                if spare.size > size { ftruncate(fd, off_t(size)) }
            } else {
                // Written under its final name, as the store does (its row makes it reachable).
                name = "\(folder)/\(hex(written % 256))/\(written).body"
                fd = try Self.open(name, flags: O_RDWR | O_CREAT | O_EXCL)
                _ = flock(fd, LOCK_SH)
                _ = try Self.writeBody(fd, at: 0, size: size)
            }
            closeDescriptor(fd)
            keep(name, size: size)
        case .segments:
            if offset + size > Self.segmentSize {
                keep(segmentPath(segmentIndex), size: Self.segmentSize)
                try startSegment(segmentIndex + 1)
            }
            offset = try Self.writeBody(segment, at: offset, size: size)
        case .ring:
            if offset + size > Self.segmentSize {
                try openRingSegment((segmentIndex + 1) % (capacity / Self.segmentSize))
            }
            offset = try Self.writeBody(segment, at: offset, size: size)
        }
        written += 1
    }

    mutating func close() {
        if segment >= 0 { closeDescriptor(segment) }
        segment = -1
    }

    /// Writes a body of `size` bytes at `offset` of `fd` in pieces; returns the offset after it.
    private static func writeBody(_ fd: Int32, at offset: Int, size: Int) throws -> Int {
        var offset = offset
        var left = size
        while left > 0 {
            let count = min(left, pieceSize)
            try write(fd, at: offset, count: count)
            offset += count
            left -= count
        }
        return offset
    }

    /// Counts a body (or a full segment) as kept; past the capacity, the oldest go (unlinked,
    /// or kept as spare files) until 80 % of it is left.
    private mutating func keep(_ path: String, size: Int) {
        kept.append((path, size))
        keptBytes += size
        // Past the capacity, down to 80 % of it at once, as the store trims.
        guard keptBytes + spareBytes > capacity else { return }
        while keptBytes + spareBytes > capacity / 5 * 4, keptHead < kept.count {
            if kind != .spares || !recycle(kept[keptHead]) { unlink(kept[keptHead].path) }
            keptBytes -= kept[keptHead].size
            keptHead += 1
        }
    }

    /// Keeps an evicted body's file as the store does: locked, emptied when the spare files
    /// would hold more than a sixteenth of the capacity, renamed in its folder. At most 1,024.
    private mutating func recycle(_ body: (path: String, size: Int)) -> Bool {
        guard spares.count < 1024 else { return false }
        let fd = openDescriptor(body.path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { closeDescriptor(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        var size = body.size
        if spareBytes + size > capacity / 16 {
            guard ftruncate(fd, 0) == 0 else { return false }
            size = 0
        }
        // A new name in the same folder, which no reader of the old one can find.
        let spare = "\(body.path.prefix(upTo: body.path.lastIndex(of: "/")!))/s\(written)-\(keptHead).body"
        guard rename(body.path, spare) == 0 else { return false }
        spares.append((spare, size))
        spareBytes += size
        return true
    }

    private mutating func startSegment(_ index: Int) throws {
        close()
        segment = try Self.open(segmentPath(index), flags: O_WRONLY | O_CREAT | O_EXCL)
        segmentIndex = index
        offset = 0
    }

    private mutating func openRingSegment(_ index: Int) throws {
        close()
        segment = try Self.open(segmentPath(index), flags: O_WRONLY)
        segmentIndex = index
        offset = 0
    }

    private func segmentPath(_ index: Int) -> String { "\(folder)/segment-\(index)" }

    private static func makeFolder(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 else { throw FloorError("cannot make \(path): \(errorText())") }
    }

    private static func open(_ path: String, flags: Int32) throws -> Int32 {
        let fd = openDescriptor(path, flags | O_CLOEXEC)
        guard fd >= 0 else { throw FloorError("cannot open \(path): \(errorText())") }
        return fd
    }

    private static func write(_ fd: Int32, at offset: Int, count: Int = pieceSize) throws {
        guard piece.withUnsafeBytes({ pwrite(fd, $0.baseAddress, count, off_t(offset)) }) == count else {
            throw FloorError("cannot write at \(offset): \(errorText())")
        }
    }
}

/// Two hex digits, as the store names its folders.
func hex(_ value: Int) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[(value >> 4) & 15], digits[value & 15]])
}
