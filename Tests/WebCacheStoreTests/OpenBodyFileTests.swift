import Foundation
import HTTPCaching
import Testing
import WebCacheStore
import WebCacheTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The body files the store keeps open for sending: shared while hot, let go when removed.
@Suite("Open body files")
struct OpenBodyFileTests {
    /// The bytes at `range` of an open file, read at explicit offsets.
    func bytes(of file: OpenBodyFile, _ range: Range<Int>) -> Data {
        var data = Data(count: range.count)
        let read = data.withUnsafeMutableBytes {
            pread(file.descriptor, $0.baseAddress, range.count, off_t(range.lowerBound))
        }
        return data.prefix(max(0, read))
    }

    /// How many of this process's descriptors are open on files under `directory`'s bodies
    /// (removed ones included), from `/proc/self/fd`.
    func descriptorsOnBodies(in directory: URL) -> Int {
        let bodies = directory.appendingPathComponent("bodies").resolvingSymlinksInPath().path
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)"))?.hasPrefix(bodies)
                == true
        }.count
    }

    @Test("a hot body file is opened once and the same descriptor serves later answers")
    func sharedWhileHot() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/video.webm")
            try store.store(Entries.make(key.url), body: Entries.body(200_000))
            let entry = try #require(try store.lookup(key).first)
            let first = try #require(store.openVerifiedBodyFile(entry))
            let second = try #require(store.openVerifiedBodyFile(entry))
            #expect(first === second)
            #expect(first.size == 200_000)
            #expect(bytes(of: second, 150_000..<200_000) == Entries.body(200_000)[150_000..<200_000])
            #expect(descriptorsOnBodies(in: directory) == 1)
        }
    }

    @Test("a removed entry's file is let go: an answer in flight still reads it, then it closes")
    func removedEntryLetGo() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/song.mp3")
            try store.store(Entries.make(key.url), body: Entries.body(100_000, seed: 5))
            let entry = try #require(try store.lookup(key).first)
            do {
                let inFlight = try #require(store.openVerifiedBodyFile(entry))
                #expect(try store.remove(entry))
                #expect(store.openVerifiedBodyFile(entry) == nil)
                #expect(bodyFiles(in: directory).isEmpty)
                #expect(bytes(of: inFlight, 0..<100_000) == Entries.body(100_000, seed: 5))
                #expect(descriptorsOnBodies(in: directory) == 1)
            }
            #expect(descriptorsOnBodies(in: directory) == 0)
        }
    }

    /// What another hand does to a body file behind the store.
    enum Tampering: String, CaseIterable, Sendable {
        case unlinked
        case cutShort = "cut short"

        func apply(to file: URL) throws {
            switch self {
            case .unlinked: try FileManager.default.removeItem(at: file)
            case .cutShort: #expect(truncate(file.path, 1_000) == 0)
            }
        }
    }

    @Test(
        "a body file unlinked or cut short by another hand is not served from the held descriptor once its check runs again",
        arguments: Tampering.allCases)
    func tamperedBehindTheStore(_ tampering: Tampering) async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            let key = Entries.key("https://example.com/clip.mp4")
            try store.store(Entries.make(key.url), body: Entries.body(80_000))
            let entry = try #require(try store.lookup(key).first)
            #expect(store.openVerifiedBodyFile(entry) != nil)
            for file in bodyFiles(in: directory) { try tampering.apply(to: file) }
            try await Task.sleep(for: .nanoseconds(2 * OpenBodyFiles.checkedFor))
            #expect(store.openVerifiedBodyFile(entry) == nil, "\(tampering.rawValue)")
            #expect(descriptorsOnBodies(in: directory) == 0)
        }
    }

    @Test("removing everything lets go of every held file")
    func removeAllLetsGo() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            for index in 0..<5 {
                let key = Entries.key("https://example.com/part\(index).ts")
                try store.store(Entries.make(key.url), body: Entries.body(40_000, seed: UInt8(index)))
                let entry = try #require(try store.lookup(key).first)
                _ = store.openVerifiedBodyFile(entry)
            }
            #expect(descriptorsOnBodies(in: directory) == 5)
            #expect(try store.removeAll() == 5)
            #expect(descriptorsOnBodies(in: directory) == 0)
        }
    }

    @Test("at most 128 files are held open, however many bodies are sent")
    func bounded() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            for index in 0..<200 {
                let key = Entries.key("https://example.com/segment\(index).m4s")
                try store.store(Entries.make(key.url), body: Entries.body(20_000, seed: UInt8(index % 250)))
                let entry = try #require(try store.lookup(key).first)
                let file = try #require(store.openVerifiedBodyFile(entry))
                #expect(bytes(of: file, 0..<20_000) == Entries.body(20_000, seed: UInt8(index % 250)))
            }
            let held = descriptorsOnBodies(in: directory)
            #expect(held > 0 && held <= 128)
        }
    }
}
