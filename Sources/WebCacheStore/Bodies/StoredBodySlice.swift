#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Bytes of a stored body, checked and held open to be read a chunk at a time: what a new part
/// copies from the part it combines with, without reading it whole. The bytes stay readable if
/// the entry is removed or replaced meanwhile (the file is held open).
package struct StoredBodySlice: Sendable {
    private enum Source: Sendable {
        case bytes(Data)
        case file(OpenBodyFile, offset: Int)
    }

    private let source: Source
    /// How many bytes the slice holds.
    package let count: Int

    /// The bytes of an inline body (or any bytes at hand).
    package init(_ bytes: Data) {
        source = .bytes(bytes)
        count = bytes.count
    }

    fileprivate init(file: OpenBodyFile, range: Range<Int>) {
        source = .file(file, offset: range.lowerBound)
        count = range.count
    }

    /// At most `limit` bytes from `offset` in the slice (fewer only at its end; none past it).
    package func read(from offset: Int, upTo limit: Int) throws -> Data {
        let offset = min(max(0, offset), count)
        let wanted = max(0, min(limit, count - offset))
        switch source {
        case .bytes(let bytes):
            let start = bytes.startIndex + offset
            return bytes.subdata(in: start..<(start + wanted))
        case .file(let file, let start):
            let data = try POSIX.readAt(file.descriptor, offset: start + offset, count: wanted)
            guard data.count == wanted else {
                throw StoreError(.corruptBody, "a stored body file ended \(wanted - data.count) bytes early")
            }
            return data
        }
    }
}

extension CacheStore {
    /// The bytes `range` of `entry`'s body (within its size), checked and held open to be read a
    /// chunk at a time. A body file not yet verified in this process is checked a chunk at a time
    /// first; a broken one is removed (and this throws).
    package func slice(of entry: CacheEntry, range: Range<Int>) throws -> StoredBodySlice {
        let range = range.clamped(to: 0..<entry.bodySize)
        guard entry.body.file != nil else { return StoredBodySlice(try readBody(entry, range: range)) }
        try checkBodyFile(entry)
        guard let file = openVerifiedBodyFile(entry) else {
            throw StoreError(.corruptBody, "the body file of \(entry.key) changed or went away")
        }
        return StoredBodySlice(file: file, range: range)
    }
}
