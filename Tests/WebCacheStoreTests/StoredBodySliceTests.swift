import Foundation
import HTTPCaching
import Testing
import WebCacheStore
import WebCacheTestSupport

/// Parts of stored bodies read without reading the body whole: a slice to copy into a new part,
/// a range for a range request, in a process that has not checked the body yet.
@Suite("Slices and ranges of stored bodies")
struct StoredBodySliceTests {
    static let body = Entries.body(700_000, seed: 11)

    /// Stores ``body`` at `url`, then runs `check` with another store on the directory (which has
    /// checked no body yet, as a new process) and the entry as it finds it.
    static func withStoredBody(
        _ url: String, corruptingAt offset: UInt64? = nil, _ check: (CacheStore, CacheEntry, URL) throws -> Void
    ) async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            try store.store(Entries.make(url), body: Self.body)
            if let offset {
                let file = try #require(bodyFiles(in: directory).first)
                let handle = try FileHandle(forWritingTo: file)
                try handle.seek(toOffset: offset)
                try handle.write(contentsOf: Data([0xFF ^ Self.body[Int(offset)]]))
                try handle.close()
            }
            let other = try CacheStore(configuration: .test(directory))
            let entry = try #require(try other.lookup(Entries.key(url)).first)
            try check(other, entry, directory)
        }
    }

    /// The slice's bytes, read `size` at a time.
    static func read(_ slice: StoredBodySlice, by size: Int) throws -> Data {
        var bytes = Data()
        while bytes.count < slice.count {
            let chunk = try slice.read(from: bytes.count, upTo: size)
            #expect(chunk.count <= size)
            if chunk.isEmpty { break }
            bytes.append(chunk)
        }
        return bytes
    }

    @Test("a slice of a body file reads its bytes a chunk at a time, and still reads once its entry is removed")
    func sliceOfFile() async throws {
        try await Self.withStoredBody("https://example.com/a.bin") { store, entry, directory in
            let slice = try store.slice(of: entry, range: 100_000..<650_000)
            #expect(slice.count == 550_000)
            #expect(byteDifference(try Self.read(slice, by: 64 << 10), Self.body[100_000..<650_000]) == nil)
            #expect(try store.remove(entry))
            #expect(bodyFiles(in: directory).isEmpty)
            #expect(byteDifference(try Self.read(slice, by: 256 << 10), Self.body[100_000..<650_000]) == nil)
            #expect(try slice.read(from: 550_000, upTo: 10).isEmpty)
        }
    }

    @Test("a slice of a corrupt body file is refused, and the entry removed, before any byte is read")
    func sliceOfCorruptFile() async throws {
        try await Self.withStoredBody("https://example.com/b.bin", corruptingAt: 600_000) { store, entry, _ in
            #expect(throws: StoreError.self) { _ = try store.slice(of: entry, range: 0..<1_000) }
            let left = try store.lookup(Entries.key("https://example.com/b.bin"))
            #expect(left.isEmpty)
        }
    }

    @Test("a slice of an inline body")
    func sliceOfInlineBody() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let small = Entries.body(900, seed: 3)
            try store.store(Entries.make("https://example.com/small"), body: small)
            let entry = try #require(try store.lookup(Entries.key("https://example.com/small")).first)
            let slice = try store.slice(of: entry, range: 100..<5_000)
            #expect(slice.count == 800)
            #expect(try Self.read(slice, by: 300) == small[100..<900])
        }
    }

    @Test(
        "a range of a body not checked yet in this process: its bytes; a body corrupt outside the range is still refused"
    )
    func rangeOfUncheckedBody() async throws {
        try await Self.withStoredBody("https://example.com/c.bin") { store, entry, _ in
            let range = try store.readBody(entry, range: 300_000..<365_536)
            #expect(byteDifference(range, Self.body[300_000..<365_536]) == nil)
        }
        try await Self.withStoredBody("https://example.com/d.bin", corruptingAt: 10) { store, entry, _ in
            #expect(throws: StoreError.self) { _ = try store.readBody(entry, range: 500_000..<600_000) }
            let left = try store.lookup(Entries.key("https://example.com/d.bin"))
            #expect(left.isEmpty)
        }
    }
}
