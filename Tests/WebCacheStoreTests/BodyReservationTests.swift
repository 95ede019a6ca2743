import Foundation
import HTTPCaching
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A body whose size is announced has its file's blocks found when the file is made.
@Suite("Body space reserved up front")
struct BodyReservationTests {
    /// The size and the bytes on disk of the one body file under `directory`.
    func sizeAndBlocks(in directory: URL) throws -> (size: Int, onDisk: Int) {
        let file = try #require(bodyFiles(in: directory).first)
        var info = stat()
        try #require(stat(file.path, &info) == 0)
        return (Int(info.st_size), Int(info.st_blocks) * 512)
    }

    #if os(Linux)
    @Test("the file gets blocks for the announced size at once; a body ending short gives the rest back")
    func reservedAndGivenBack() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/video.mp4")
            let body = Entries.body(300_000)
            let writer = try store.makeWriter(for: Entries.make(key.url))
            writer.expect(size: 2 << 20)
            try writer.write(body.prefix(4096))
            let started = try sizeAndBlocks(in: directory)
            #expect(started.size == 4096)
            #expect(started.onDisk >= 2 << 20, "only \(started.onDisk) bytes reserved")

            try writer.write(body.dropFirst(4096))
            try writer.commit()
            let stored = try sizeAndBlocks(in: directory)
            #expect(stored.size == 300_000)
            #expect(stored.onDisk >= 300_000 && stored.onDisk < 400_000, "\(stored.onDisk) bytes on disk")
            let entry = try #require(try store.lookup(key).first)
            #expect(try store.readBody(entry) == body)
        }
    }

    @Test("a body the disk cannot hold fails the write that makes its file; nothing is stored or left behind")
    func noRoom() async throws {
        try await TemporaryDirectory.with { directory in
            var configuration = CacheStore.Configuration.test(directory)
            configuration.maximumEntrySize = .max
            let store = try CacheStore(configuration: configuration)
            let key = Entries.key("https://example.com/huge.iso")
            let writer = try store.makeWriter(for: Entries.make(key.url))
            writer.expect(size: 1 << 50)
            try writer.write(Entries.body(1000))
            #expect(bodyFiles(in: directory).isEmpty, "a body within the inline limit needs no file yet")
            #expect {
                try writer.write(Entries.body(4096))
            } throws: { error in
                (error as? StoreError)?.code == .ioFailure
                    && "\(error)".contains("no room for a body of \(1 << 50) bytes")
            }
            #expect(bodyFiles(in: directory).isEmpty)
            #expect(throws: StoreError.self) { try writer.commit() }
            #expect(try store.lookup(key).isEmpty)
        }
    }
    #endif

    @Test("an announced size past the largest entry reserves nothing; the body is dropped at the limit as before")
    func pastTheLimit() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/big.bin")
            let writer = try store.makeWriter(for: Entries.make(key.url))
            writer.expect(size: 1 << 50)
            try writer.write(Entries.body(100_000))
            let started = try sizeAndBlocks(in: directory)
            #expect(started.onDisk < 200_000, "\(started.onDisk) bytes on disk")
            try writer.write(Entries.body(8 << 20))
            #expect(writer.isAbandoned)
            #expect(try writer.commit() == nil)
            #expect(bodyFiles(in: directory).isEmpty)
        }
    }
}
