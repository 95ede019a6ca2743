import Foundation
import HTTPCaching
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

#if canImport(Glibc)
import Glibc
#endif

/// Removed entries' files are emptied and reused for new bodies, unless someone still reads them.
@Suite("Spare body files")
struct SpareBodyFileTests {
    /// The inode numbers and sizes of `store`'s spare files.
    func spares(of store: CacheStore) -> [(inode: UInt64, size: Int)] {
        store.spares.names().compactMap { name in
            var info = stat()
            guard stat(store.files.path(name), &info) == 0 else { return nil }
            return (UInt64(info.st_ino), Int(info.st_size))
        }
    }

    /// The inode numbers of the body files under `directory`.
    func bodyInodes(in directory: URL) -> Set<UInt64> {
        Set(
            bodyFiles(in: directory).compactMap { file in
                var info = stat()
                return stat(file.path, &info) == 0 ? UInt64(info.st_ino) : nil
            })
    }

    @Test("a removed entry's file is kept under a new name; the next body is written over it and cut to its size")
    func reused() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let old = Entries.key("https://example.com/old.js")
            try store.store(Entries.make(old.url), body: Entries.body(200_000, seed: 1))
            let inode = try #require(bodyInodes(in: directory).first)
            let oldFile = try #require(bodyFiles(in: directory).first)
            #expect(try store.remove(#require(try store.lookup(old).first)))
            #expect(!FileManager.default.fileExists(atPath: oldFile.path))
            #expect(spares(of: store).map(\.inode) == [inode])
            #expect(spares(of: store).map(\.size) == [200_000])
            #expect(try store.statistics().spareBytes == 200_000)

            let new = Entries.key("https://example.com/new.js")
            try store.store(Entries.make(new.url), body: Entries.body(50_000, seed: 2))
            #expect(bodyInodes(in: directory) == [inode])
            #expect(spares(of: store).isEmpty)
            #expect(try store.statistics().spareBytes == 0)
            let file = try #require(bodyFiles(in: directory).first)
            #expect(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int == 50_000)
            let entry = try #require(try store.lookup(new).first)
            #expect(try store.readBody(entry) == Entries.body(50_000, seed: 2))
        }
    }

    @Test("a full cache stores without making files: evicted files take the new bodies")
    func fullCacheReuses() async throws {
        try await TemporaryDirectory.with { directory in
            // Room for about ten 100 KB bodies; eviction trims to 80 %.
            let store = try CacheStore(configuration: .test(directory, disk: 1_000_000))
            for index in 0..<30 {
                let key = Entries.key("https://example.com/fill\(index).bin")
                try store.store(Entries.make(key.url), body: Entries.body(100_000, seed: UInt8(index)))
            }
            for index in 30..<60 {
                let spareInodes = Set(spares(of: store).map(\.inode))
                #expect(!spareInodes.isEmpty)
                let key = Entries.key("https://example.com/more\(index).bin")
                let stored = try #require(
                    try store.store(Entries.make(key.url), body: Entries.body(100_000, seed: UInt8(index))))
                var info = stat()
                let name = try #require(stored.body.file?.name)
                #expect(stat(store.files.path(name), &info) == 0)
                #expect(spareInodes.contains(UInt64(info.st_ino)), "a new file was made for entry \(index)")
            }
            for index in 55..<60 {
                let key = Entries.key("https://example.com/more\(index).bin")
                let entry = try #require(try store.lookup(key).first)
                #expect(try store.readBody(entry) == Entries.body(100_000, seed: UInt8(index)))
            }
        }
    }

    @Test("a file an answer is still sending is deleted, not reused: the answer's bytes stay")
    func heldFileNotReused() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/movie.mp4")
            try store.store(Entries.make(key.url), body: Entries.body(300_000, seed: 3))
            let entry = try #require(try store.lookup(key).first)
            let inFlight = try #require(store.openVerifiedBodyFile(entry))
            #expect(try store.remove(entry))
            #expect(spares(of: store).isEmpty)
            try store.store(Entries.make("https://example.com/next.mp4"), body: Entries.body(300_000, seed: 4))
            var data = Data(count: 300_000)
            let read = data.withUnsafeMutableBytes { pread(inFlight.descriptor, $0.baseAddress, 300_000, 0) }
            #expect(read == 300_000)
            #expect(data == Entries.body(300_000, seed: 3))
        }
    }

    @Test("a body being streamed out keeps its file from reuse until the reader is done")
    func streamedBodyNotReused() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/archive.zip")
            try store.store(Entries.make(key.url), body: Entries.body(250_000, seed: 5))
            let entry = try #require(try store.lookup(key).first)
            var reader: BodyReader? = try store.openBody(entry, chunkSize: 10_000)
            let first = try #require(try reader?.next())
            #expect(try store.remove(entry))
            #expect(spares(of: store).isEmpty)
            try store.store(Entries.make("https://example.com/other.zip"), body: Entries.body(250_000, seed: 6))
            var streamed = first
            while let chunk = try reader?.next() { streamed.append(chunk) }
            #expect(streamed == Entries.body(250_000, seed: 5))
            reader = nil

            // Once nobody reads it, the next removal recycles.
            let other = try #require(try store.lookup(Entries.key("https://example.com/other.zip")).first)
            #expect(try store.remove(other))
            #expect(spares(of: store).count == 1)
        }
    }

    @Test("bytes read while they were written stay readable after the entry is removed and replaced")
    func writtenBodyNotReused() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/live.m3u8")
            let writer = try store.makeWriter(for: Entries.make(key.url))
            try writer.write(Entries.body(120_000, seed: 8))
            let written = try #require(writer.writtenBody())
            let entry = try #require(try writer.commit())
            #expect(try store.remove(entry))
            #expect(spares(of: store).isEmpty)
            try store.store(Entries.make("https://example.com/next.m3u8"), body: Entries.body(120_000, seed: 9))
            #expect(try written.read(offset: 0, count: 120_000) == Entries.body(120_000, seed: 8))
        }
    }

    @Test("another store on the same directory reading a body keeps it from reuse")
    func otherStoreReading() async throws {
        try await TemporaryDirectory.with { directory in
            let first = try CacheStore(configuration: .test(directory))
            let second = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/shared.css")
            try first.store(Entries.make(key.url), body: Entries.body(90_000, seed: 10))
            let reader = try second.openBody(#require(try second.lookup(key).first), chunkSize: 90_000)
            #expect(try first.remove(#require(try first.lookup(key).first)))
            #expect(spares(of: first).isEmpty)
            try first.store(Entries.make("https://example.com/after.css"), body: Entries.body(90_000, seed: 11))
            #expect(try reader.next() == Entries.body(90_000, seed: 10))
        }
    }

    @Test("at most `capacity` spare files are kept, holding at most `byteLimit` bytes; emptied ones make room")
    func bounded() async throws {
        try await TemporaryDirectory.with { directory in
            let files = BodyFiles(directory: directory, namespace: "default")
            func bodyFile(_ index: Int) throws -> String {
                let name = files.newName(key: Entries.key("https://example.com/\(index)"), varyKey: "")
                try files.prepareDirectories(for: name)
                try Data(repeating: 1, count: 5_000).write(to: URL(fileURLWithPath: files.path(name)))
                return name
            }
            let spares = SpareBodyFiles(capacity: 2, byteLimit: 8_000)
            var kept: [String] = []
            for index in 0..<4 {
                let name = try bodyFile(index)
                #expect(spares.recycle(name, in: files))
                #expect(!FileManager.default.fileExists(atPath: files.path(name)))
                kept = spares.names()
                #expect(kept.count == min(index + 1, 2))
            }
            // The first keeps its bytes; each later one would have passed 8,000 bytes, so it is
            // kept emptied, in place of the one emptied before it (deleted).
            let sizes = try kept.map { try FileManager.default.attributesOfItem(atPath: files.path($0))[.size] as? Int }
            #expect(sizes == [5_000, 0])
            #expect(bodyFiles(in: directory).count == 2)
            #expect(spares.bytesHeld() == 5_000)
            // A file that holds bytes is taken before an emptied one.
            let taken = try #require(spares.take(in: files))
            close(taken.descriptor)
            #expect(taken.size == 5_000)
            #expect(spares.count() == 1)
            #expect(spares.bytesHeld() == 0)

            // Full of files that hold bytes: nothing to make room with, so the next is not kept.
            let full = SpareBodyFiles(capacity: 1, byteLimit: 100_000)
            #expect(full.recycle(try bodyFile(10), in: files))
            let refused = try bodyFile(11)
            #expect(!full.recycle(refused, in: files))
            #expect(FileManager.default.fileExists(atPath: files.path(refused)))
            #expect(full.bytesHeld() == 5_000)
        }
    }

    @Test("files recycled at once on several threads stay within the count and byte limits, and none is lost")
    func boundedWhenConcurrent() async throws {
        try await TemporaryDirectory.with { directory in
            let files = BodyFiles(directory: directory, namespace: "default")
            let names = try (0..<64).map { index in
                let name = files.newName(key: Entries.key("https://example.com/\(index)"), varyKey: "")
                try files.prepareDirectories(for: name)
                try Data(repeating: 1, count: 5_000).write(to: URL(fileURLWithPath: files.path(name)))
                return name
            }
            let spares = SpareBodyFiles(capacity: 3, byteLimit: 12_000)
            let refused = Locked(0)
            for round in 0..<4 {
                DispatchQueue.concurrentPerform(iterations: 16) { index in
                    if !spares.recycle(names[round * 16 + index], in: files) { refused.withLock { $0 += 1 } }
                }
            }
            #expect(spares.count() == 3)
            #expect(spares.bytesHeld() == 10_000)
            let sizes = try spares.names().map {
                try #require(try FileManager.default.attributesOfItem(atPath: files.path($0))[.size] as? Int)
            }
            #expect(sizes.reduce(0, +) == spares.bytesHeld())
            #expect(sizes.filter { $0 > 0 }.count == 2)
            // Every file is a spare, refused at its own name, or an emptied spare deleted to make way.
            #expect(bodyFiles(in: directory).count == spares.count() + refused.withLock { $0 })
        }
    }

    /// Stores `https://example.com/bigN.bin` with a 60,000-byte body for each N in `indices`.
    func storeBig(_ indices: Range<Int>, in store: CacheStore) throws {
        for index in indices {
            try store.store(
                Entries.make("https://example.com/big\(index).bin"), body: Entries.body(60_000, seed: UInt8(index)))
        }
    }

    @Test("bytes kept in spare files count toward the disk capacity, and go before any entry")
    func spareBytesCounted() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory, disk: 1_000_000))
            try storeBig(0..<16, in: store)
            #expect(try store.remove(#require(try store.lookup(Entries.key("https://example.com/big0.bin")).first)))
            #expect(try store.statistics().spareBytes == 60_000)
            // Inline bodies (no file) take no spare: 900,000 + 45,000 in the index and 60,000 in
            // the spare file pass the capacity, which the index alone does not. The spare file
            // goes, and every entry stays.
            for index in 0..<45 {
                try store.store(Entries.make("https://example.com/small\(index).txt"), body: Entries.body(1_000))
            }
            let statistics = try store.statistics()
            #expect(statistics.entries == 15 + 45)
            #expect(statistics.spareBytes == 0)
            #expect(store.spares.count() == 0)
            #expect(statistics.diskBytes + statistics.spareBytes <= 1_000_000)
            #expect(bodyFiles(in: directory).count == 15)
        }
    }

    @Test("the files one trim evicts keep their bytes, within what it freed under the capacity")
    func trimmedFilesKeepBytes() async throws {
        try await TemporaryDirectory.with { directory in
            // Trims go from past 1,000,000 bytes down to 800,000: about three 60,000-byte files
            // at a time, more than a sixteenth of the capacity (62,500) holds.
            let store = try CacheStore(configuration: .test(directory, disk: 1_000_000))
            try storeBig(0..<17, in: store)
            let statistics = try store.statistics()
            #expect(statistics.entries == 13)
            #expect(statistics.spareBytes == 180_000)
            #expect(spares(of: store).map(\.size).sorted() == [0, 60_000, 60_000, 60_000])
            #expect(statistics.diskBytes + statistics.spareBytes <= 1_000_000)
            // The next three bodies are written over those bytes, in no new file.
            let inodes = bodyInodes(in: directory)
            #expect(inodes.count == 13 + 4)
            try storeBig(17..<20, in: store)
            #expect(bodyInodes(in: directory) == inodes)
            #expect(try store.statistics().spareBytes == 0)
            #expect(spares(of: store).map(\.size) == [0])
            let last = try #require(try store.lookup(Entries.key("https://example.com/big19.bin")).first)
            #expect(try store.readBody(last) == Entries.body(60_000, seed: 19))
        }
    }

    @Test("a store let go deletes its spare files; one killed leaves files without a row, which recovery deletes")
    func leftBehind() async throws {
        try await TemporaryDirectory.with { directory in
            let key = Entries.key("https://example.com/a.bin")
            do {
                let store = try CacheStore(configuration: .test(directory))
                try store.store(Entries.make(key.url), body: Entries.body(70_000, seed: 12))
                #expect(try store.remove(#require(try store.lookup(key).first)))
                #expect(store.spares.count() == 1)
                #expect(bodyFiles(in: directory).count == 1)
            }
            #expect(bodyFiles(in: directory).isEmpty)

            // Killed outright: its spare file stays, as a body file without a row.
            let spare: URL
            do {
                let store = try CacheStore(configuration: .test(directory))
                try store.store(Entries.make(key.url), body: Entries.body(70_000, seed: 13))
                #expect(try store.remove(#require(try store.lookup(key).first)))
                spare = try #require(bodyFiles(in: directory).first)
                try FileManager.default.copyItem(at: spare, to: spare.appendingPathExtension("copy"))
            }
            try FileManager.default.moveItem(at: spare.appendingPathExtension("copy"), to: spare)
            let store = try CacheStore(configuration: .test(directory))
            #expect(bodyFiles(in: directory).isEmpty)
            #expect(try store.statistics().spareBytes == 0)
        }
    }
}
