import Foundation
import HTTPCaching
import Testing
import WebCacheStore
import WebCacheTestSupport

@Suite("Recovery on open and on read")
struct RecoveryTests {
    /// Stores one file-backed entry and returns its key and body file.
    func storeOne(_ directory: URL, url: String = "https://example.com/r") throws -> (CacheKey, URL) {
        let store = try CacheStore(configuration: .test(directory))
        try store.store(Entries.make(url), body: Entries.body(50_000))
        let file = try #require(bodyFiles(in: directory).first)
        return (Entries.key(url), file)
    }

    @Test("a truncated body is never served: it is removed and reads as a miss")
    func truncated() async throws {
        try await TemporaryDirectory.with { directory in
            let (key, file) = try storeOne(directory)
            let handle = try FileHandle(forWritingTo: file)
            try handle.truncate(atOffset: 20_000)
            try handle.close()
            let store = try CacheStore(configuration: .test(directory))
            let entry = try #require(try store.lookup(key).first)
            #expect(throws: StoreError.self) { try store.readBody(entry) }
            #expect(try store.lookup(key).isEmpty)
            #expect(bodyFiles(in: directory).isEmpty)  // deleted, not kept as a spare file
        }
    }

    @Test("a body overwritten with garbage of the same length fails its checksum", arguments: [false, true])
    func garbageBody(streamed: Bool) async throws {
        try await TemporaryDirectory.with { directory in
            let (key, file) = try storeOne(directory)
            try Entries.body(50_000, seed: 99).write(to: file)
            let store = try CacheStore(configuration: .test(directory))
            let entry = try #require(try store.lookup(key).first)
            do {
                if streamed { _ = try store.openBody(entry) } else { _ = try store.readBody(entry) }
                Issue.record("a corrupt body was served")
            } catch let error as StoreError {
                #expect(error.code == .corruptBody)
            }
            #expect(try store.lookup(key).isEmpty)
        }
    }

    @Test("a missing body file removes its row on open")
    func missingFile() async throws {
        try await TemporaryDirectory.with { directory in
            let (key, file) = try storeOne(directory)
            try FileManager.default.removeItem(at: file)
            let store = try CacheStore(configuration: .test(directory))
            #expect(try store.lookup(key).isEmpty)
            #expect(try store.statistics().entries == 0)
        }
    }

    @Test("temporary files and files without rows are removed on open")
    func strayFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let (key, file) = try storeOne(directory)
            let folder = file.deletingLastPathComponent()
            try Data("half".utf8).write(to: folder.appendingPathComponent("0123456789abcdef-0000000000000000.tmp"))
            try Data("orphan".utf8).write(to: folder.appendingPathComponent("fedcba9876543210-0000000000000000.body"))
            #expect(bodyFiles(in: directory).count == 3)
            let store = try CacheStore(configuration: .test(directory))
            #expect(bodyFiles(in: directory) == [file])
            #expect(try store.readBody(#require(try store.lookup(key).first)) == Entries.body(50_000))
        }
    }

    @Test("a spill file is gone once made; one a crash left behind (named) is removed on open")
    func spillFiles() async throws {
        try await TemporaryDirectory.with { directory in
            let (_, file) = try storeOne(directory)
            let store = try CacheStore(configuration: .test(directory))
            let spill = try store.makeSpillFile()
            let offset = try spill.append(Data("spilled bytes".utf8))
            #expect(try spill.contents.read(offset: offset, count: 13) == Data("spilled bytes".utf8))
            // Unnamed as soon as made: nothing in the directory but the body.
            #expect(bodyFiles(in: directory) == [file])
            let folder = file.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("spill")
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(names.isEmpty)
            withExtendedLifetime(spill) {}
        }
        // A crash between making one and unlinking it leaves it named: the next open removes it.
        try await TemporaryDirectory.with { directory in
            let (_, file) = try storeOne(directory)
            let folder = file.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("spill")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("left by a crash".utf8).write(to: folder.appendingPathComponent("1234.spill"))
            _ = try CacheStore(configuration: .test(directory))
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
            #expect(bodyFiles(in: directory) == [file])
        }
    }

    @Test("a process that is not alone in the directory leaves others' bodies in flight alone")
    func notAlone() async throws {
        try await TemporaryDirectory.with { directory in
            let (_, file) = try storeOne(directory)
            let first = try CacheStore(configuration: .test(directory))
            // A body another process is writing has no row yet (and an earlier version wrote it
            // as `.tmp`).
            let inFlight = ["0123456789abcdef-1111111111111111.tmp", "0123456789abcdef-2222222222222222.body"].map {
                file.deletingLastPathComponent().appendingPathComponent($0)
            }
            for file in inFlight { try Data("in flight".utf8).write(to: file) }
            let second = try CacheStore(configuration: .test(directory))
            #expect(inFlight.allSatisfy { FileManager.default.fileExists(atPath: $0.path) })
            _ = (first, second)
        }
    }

    @Test("a corrupt index is moved aside and replaced by an empty one that works")
    func corruptIndex() async throws {
        try await TemporaryDirectory.with { directory in
            _ = try storeOne(directory)
            let index = directory.appendingPathComponent("index.sqlite")
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("index.sqlite-wal"))
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("index.sqlite-shm"))
            try Data(repeating: 0xAB, count: 64 << 10).write(to: index)
            let store = try CacheStore(configuration: .test(directory))
            #expect(try store.statistics().entries == 0)
            #expect(bodyFiles(in: directory).isEmpty)  // the old bodies had no rows any more
            try store.store(Entries.make("https://example.com/new"), body: Entries.body(3000))
            #expect(try store.readBody(store.lookup(Entries.key("https://example.com/new"))[0]) == Entries.body(3000))
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(names.contains { $0.hasPrefix("index.sqlite.corrupt-") })
        }
    }

    @Test("a corrupt index is left alone by a process that is not alone in the directory")
    func corruptIndexWhileShared() async throws {
        try await TemporaryDirectory.with { directory in
            _ = try storeOne(directory)
            let index = directory.appendingPathComponent("index.sqlite")
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("index.sqlite-wal"))
            try? FileManager.default.removeItem(at: directory.appendingPathComponent("index.sqlite-shm"))
            // Another process holds the directory (its shared lock), as a running proxy does.
            let other = open(directory.appendingPathComponent("lock").path, O_RDWR | O_CREAT, 0o644)
            defer { close(other) }
            #expect(flock(other, LOCK_SH) == 0)
            try Data(repeating: 0xAB, count: 64 << 10).write(to: index)
            do {
                _ = try CacheStore(configuration: .test(directory))
                Issue.record("a corrupt index was opened while another process uses the directory")
            } catch let error as StoreError {
                #expect(error.code == .databaseFailure)
                #expect(error.description.contains("another process"))
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(!names.contains { $0.hasPrefix("index.sqlite.corrupt-") })
            #expect(try byteDifference(Data(contentsOf: index), Data(repeating: 0xAB, count: 64 << 10)) == nil)
        }
    }

    @Test("a failing disk abandons the write cleanly; earlier entries stay readable")
    func writeFailure() async throws {
        try await TemporaryDirectory.with { directory in
            var configuration = CacheStore.Configuration.test(directory)
            configuration.writeFault = { written in
                if written >= 100_000 { throw POSIXError(.ENOSPC) }
            }
            let store = try CacheStore(configuration: configuration)
            try store.store(Entries.make("https://example.com/old"), body: Entries.body(50_000))
            try store.store(Entries.make("https://example.com/victim"), body: Entries.body(40_000, seed: 1))
            let writer = try store.makeWriter(for: Entries.make("https://example.com/victim"))
            var failure: StoreError?
            do {
                for _ in 0..<10 { try writer.write(Entries.body(30_000)) }
            } catch let error as StoreError {
                failure = error
            }
            #expect(failure?.code == .ioFailure)
            #expect(throws: StoreError.self) { try writer.commit() }
            #expect(try store.readBody(store.lookup(Entries.key("https://example.com/old"))[0]) == Entries.body(50_000))
            // The entry being replaced keeps its previous body.
            #expect(
                try store.readBody(store.lookup(Entries.key("https://example.com/victim"))[0])
                    == Entries.body(40_000, seed: 1))
            #expect(bodyFiles(in: directory).allSatisfy { $0.pathExtension == "body" })
            #expect(bodyFiles(in: directory).count == 2)
        }
    }

    @Test("a writer dropped without commit leaves nothing behind")
    func droppedWriter() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            do {
                let writer = try store.makeWriter(for: Entries.make("https://example.com/dropped"))
                try writer.write(Entries.body(200_000))
            }
            #expect(bodyFiles(in: directory).isEmpty)
            #expect(try store.lookup(Entries.key("https://example.com/dropped")).isEmpty)
        }
    }

    @Test("invalid configurations and unusable directories are clear errors")
    func badConfiguration() async throws {
        try await TemporaryDirectory.with { directory in
            var negative = CacheStore.Configuration.test(directory)
            negative.diskCapacity = -1
            #expect(throws: StoreError.self) { try CacheStore(configuration: negative) }
            let file = directory.appendingPathComponent("not-a-directory")
            try Data("x".utf8).write(to: file)
            #expect(throws: StoreError.self) { try CacheStore(configuration: .test(file)) }
        }
    }

    @Test("body directories removed under a running store are made again for the next body")
    func bodyDirectoriesRemoved() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .test(directory))
            try store.store(Entries.make("https://example.com/first"), body: Entries.body(50_000))
            try FileManager.default.removeItem(at: directory.appendingPathComponent("bodies"))
            let key = Entries.key("https://example.com/second")
            try store.store(Entries.make(key.url), body: Entries.body(50_000, seed: 3))
            #expect(try store.readBody(store.lookup(key)[0]) == Entries.body(50_000, seed: 3))
        }
    }
}
