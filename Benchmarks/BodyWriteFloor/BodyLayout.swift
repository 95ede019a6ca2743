#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One way of laying bodies out on disk, with its files open and its eviction queue
/// (see ``BodyWriteFloor``).
struct BodyLayout {
    enum Kind: String, CaseIterable, CustomStringConvertible {
        case files, recycled, segments, ring
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
    /// `recycled`: evicted bodies' files, kept for new bodies instead of unlinked.
    private var spares: [String] = []
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
        case .files, .recycled:
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
        case .files, .recycled:
            let name = "\(folder)/\(hex(written % 256))/\(written)"
            let fd: Int32
            if let spare = spares.popLast() {
                // An evicted body's file, emptied and written again under a new name.
                guard rename(spare, "\(name).tmp") == 0 else {
                    throw FloorError("cannot rename \(spare): \(errorText())")
                }
                fd = try Self.open("\(name).tmp", flags: O_WRONLY | O_TRUNC)
            } else {
                fd = try Self.open("\(name).tmp", flags: O_WRONLY | O_CREAT | O_EXCL)
            }
            _ = try Self.writeBody(fd, at: 0, size: size)
            closeDescriptor(fd)
            guard rename("\(name).tmp", "\(name).body") == 0 else {
                throw FloorError("cannot rename \(name): \(errorText())")
            }
            keep("\(name).body", size: size)
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

    /// Counts a body (or a full segment) as kept, and unlinks the oldest while over capacity.
    private mutating func keep(_ path: String, size: Int) {
        kept.append((path, size))
        keptBytes += size
        while keptBytes > capacity, keptHead < kept.count {
            if kind == .recycled {
                spares.append(kept[keptHead].path)
            } else {
                unlink(kept[keptHead].path)
            }
            keptBytes -= kept[keptHead].size
            keptHead += 1
        }
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
