import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCacheStore
import WebCacheTestSupport

@testable import WebCache

@Suite("A body still arriving holds little memory once the store's file has it")
struct BodyBroadcastMemoryTests {
    static func entry(_ url: String) -> NewEntry {
        var response = HTTPResponse(status: .ok)
        response.headerFields[.cacheControl] = "max-age=60"
        return NewEntry(
            stored: StoredResponse(
                request: HTTPRequest(method: .get, url: URL(string: url)!), response: response, requestTime: Date(),
                responseTime: Date()))
    }

    /// 2 MiB in 64 KiB chunks with a varying pattern, so that a chunk read from the wrong place shows.
    static let chunks: [Data] = (0..<32).map { index in
        Fixtures.patternedBytes(64 << 10, seed: index)
    }

    @Test(
        "stored: memory stays within the budget however long the body; readers early, late and after the file is gone get it whole"
    )
    func storedBodyStaysWithinBudget() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .init(directory: directory))
            let writer = try store.makeWriter(for: Self.entry("https://example.com/large"))
            let prefix = Data("stored bytes before the body".utf8)
            try writer.write(prefix)
            let body = BodyBroadcast()
            let early = Task { try await Self.read(body) }
            var received = 0
            var kept = false
            var mostInMemory = 0
            for chunk in Self.chunks {
                body.append(chunk)
                received += chunk.count
                try writer.write(chunk)
                if !kept, let written = writer.writtenBody() {
                    body.keep(in: written, bodyStartsAt: prefix.count)
                    kept = true
                }
                body.bodyInFile(upTo: received)
                mostInMemory = max(mostInMemory, body.bytesInMemory)
            }
            body.finish()
            #expect(kept)
            #expect(mostInMemory <= BodyBroadcast.memoryBudget + Self.chunks[0].count, "\(mostInMemory) bytes held")
            let whole = Self.chunks.reduce(Data(), +)
            #expect(try await early.value == whole)
            #expect(try await Self.read(body) == whole, "a reader that starts after the end reads back from the file")
            // The file is committed (renamed), then the entry removed (deleted): the bytes stay readable.
            let stored = try #require(try writer.commit())
            #expect(try store.remove(stored))
            #expect(try await body.collect() == whole)
            #expect(body.receivedCount == whole.count)
        }
    }

    @Test(
        "not stored: past the budget the body goes to a spill file; memory stays within the budget and every reader gets it whole"
    )
    func unstoredBodySpills() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .init(directory: directory))
            let body = BodyBroadcast()
            body.spillWhenLarge { try store.makeSpillFile() }
            let early = Task { try await Self.read(body) }
            var mostInMemory = 0
            for chunk in Self.chunks {
                body.append(chunk)
                mostInMemory = max(mostInMemory, body.bytesInMemory)
            }
            body.finish()
            #expect(mostInMemory <= BodyBroadcast.memoryBudget + Self.chunks[0].count, "\(mostInMemory) bytes held")
            let whole = Self.chunks.reduce(Data(), +)
            #expect(try await early.value == whole)
            #expect(try await Self.read(body) == whole)
        }
    }

    @Test("storing stops half-way (too large): the store's file has the first part, a spill file the rest")
    func storingStopsHalfWay() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .init(directory: directory))
            let writer = try store.makeWriter(for: Self.entry("https://example.com/too-large"))
            let body = BodyBroadcast()
            var received = 0
            var mostInMemory = 0
            for (index, chunk) in Self.chunks.enumerated() {
                body.append(chunk)
                received += chunk.count
                if index < 10 {
                    try writer.write(chunk)
                    if index == 0, let written = writer.writtenBody() { body.keep(in: written, bodyStartsAt: 0) }
                    body.bodyInFile(upTo: received)
                } else if index == 10 {
                    writer.cancel()
                    body.spillWhenLarge { try store.makeSpillFile() }
                }
                mostInMemory = max(mostInMemory, body.bytesInMemory)
            }
            body.finish()
            #expect(mostInMemory <= BodyBroadcast.memoryBudget + 2 * Self.chunks[0].count, "\(mostInMemory) bytes held")
            #expect(try await Self.read(body) == Self.chunks.reduce(Data(), +))
        }
    }

    @Test(
        "no file to lean on (none given, or none can be made): every chunk stays in memory, as a collected body would")
    func noFileStaysInMemory() async throws {
        for failingSpill in [false, true] {
            let body = BodyBroadcast()
            if failingSpill { body.spillWhenLarge { throw StoreError(.ioFailure, "the disk is full") } }
            for chunk in Self.chunks { body.append(chunk) }
            body.bodyInFile(upTo: 1 << 30)
            body.finish()
            #expect(body.bytesInMemory == Self.chunks.count * Self.chunks[0].count)
            #expect(try await Self.read(body) == Self.chunks.reduce(Data(), +))
        }
    }

    @Test("read once, by a reader as fast as the origin: chunks go as they are taken, nothing is spilled")
    func readOnceKeepsUp() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .init(directory: directory))
            let body = BodyBroadcast(readOnce: true)
            body.spillWhenLarge { try store.makeSpillFile() }
            var read = Data()
            var mostInMemory = 0
            for (index, chunk) in Self.chunks.enumerated() {
                body.append(chunk)
                mostInMemory = max(mostInMemory, body.bytesInMemory)
                read.append(try #require(try await body.take(at: index)))
            }
            body.finish()
            #expect(try await body.take(at: Self.chunks.count) == nil)
            #expect(read == Self.chunks.reduce(Data(), +))
            #expect(mostInMemory <= 2 * Self.chunks[0].count, "\(mostInMemory) bytes held")
            #expect(body.bytesSpilled == 0)
            #expect(body.bytesInMemory == 0)
            let error = await #expect(throws: CacheError.self, "a second reading finds the first chunks gone") {
                _ = try await body.take(at: 0)
            }
            #expect(error?.code == .bodyAlreadyRead)
        }
    }

    @Test("read once, by a reader behind the origin: what it has not taken spills past the budget; it gets it whole")
    func readOnceSlowReaderSpills() async throws {
        try await TemporaryDirectory.with { directory in
            let store = try CacheStore(configuration: .init(directory: directory))
            let body = BodyBroadcast(readOnce: true)
            body.spillWhenLarge { try store.makeSpillFile() }
            var mostInMemory = 0
            for chunk in Self.chunks {
                body.append(chunk)
                mostInMemory = max(mostInMemory, body.bytesInMemory)
            }
            body.finish()
            var read = Data()
            var index = 0
            while let chunk = try await body.take(at: index) {
                read.append(chunk)
                index += 1
            }
            #expect(read == Self.chunks.reduce(Data(), +))
            #expect(mostInMemory <= BodyBroadcast.memoryBudget + Self.chunks[0].count, "\(mostInMemory) bytes held")
            #expect(body.bytesSpilled >= read.count - BodyBroadcast.memoryBudget - Self.chunks[0].count)
        }
    }

    static func read(_ body: BodyBroadcast) async throws -> Data {
        var data = Data()
        var index = 0
        while let chunk = try await body.chunk(at: index) {
            data.append(chunk)
            index += 1
        }
        return data
    }
}

@Suite("Large bodies the engine streams without storing them")
struct LargeUnstoredBodyTests {
    static let large = Fixtures.patternedBytes(3 << 20)

    @Test(
        "no-store, and too large to store: streamed whole and intact through the spill file; nothing is stored",
        arguments: ["no-store", "max-age=600"])
    func streamedWhole(cacheControl: String) async throws {
        try await EngineHarness.run(adjust: { $0.store.maximumEntrySize = 1 << 20 }) { h in
            h.origin.route("/large") { _ in
                TestOrigin.Response(
                    headers: [("Cache-Control", cacheControl), ("Content-Type", "video/webm")], body: Self.large)
            }
            let url = h.origin.url("/large").absoluteString
            let response = try await h.cache.streamingResponse(for: Fixtures.request(.get, url))
            #expect(try await response.body.collect() == Self.large)
            #expect(
                try await response.body.collect() == Self.large, "a second reading starts again from the first byte")
            let again = try await h.get("/large")
            #expect(byteDifference(again.body, Self.large) == nil)
            #expect(!again.isFromCache)
            #expect(h.origin.requests(to: "/large").count == 2)
            #expect(Self.spillFolders(in: h.directory).count == 1, "the body went past the budget into a spill file")
        }
    }

    @Test("a body not stored is read once: a second reading throws instead of giving part of it")
    func readOnce() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/large") { _ in
                TestOrigin.Response(headers: [("Cache-Control", "no-store")], body: Self.large)
            }
            let response = try await h.cache.streamingResponse(
                for: Fixtures.request(.get, h.origin.url("/large").absoluteString))
            var read = Data()
            for try await chunk in response.body { read.append(chunk) }
            #expect(read == Self.large)
            await #expect(throws: CacheError.self) {
                for try await _ in response.body {}
            }
        }
    }

    @Test("a Content-Length past maximumEntrySize: Cache-Status does not say stored, and no writer starts")
    func announcedTooLarge() async throws {
        try await EngineHarness.run(adjust: { $0.store.maximumEntrySize = 1 << 20 }) { h in
            h.origin.route("/large") { _ in
                TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: Self.large)
            }
            let response = try await h.cache.streamingResponse(
                for: Fixtures.request(.get, h.origin.url("/large").absoluteString))
            #expect(response.cacheStatus.stored != true, "\(response.head.headerFields[.cacheStatus] ?? "")")
            #expect(try await response.body.collect() == Self.large)
            let files = try FileManager.default.subpathsOfDirectory(atPath: h.directory.path)
            #expect(!files.contains { $0.hasSuffix(".body") || $0.hasSuffix(".tmp") }, "\(files)")
        }
    }

    @Test(
        "storing fails half-way (a full disk): the rest of the body goes to a spill file and reaches the client intact")
    func storingFailsHalfWay() async throws {
        try await EngineHarness.run(adjust: { configuration in
            configuration.store.writeFault = { written in if written > 600_000 { throw POSIXError(.ENOSPC) } }
        }) { h in
            h.origin.route("/large") { _ in
                TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: Self.large)
            }
            let response = try await h.cache.streamingResponse(
                for: Fixtures.request(.get, h.origin.url("/large").absoluteString))
            #expect(try await response.body.collect() == Self.large)
            #expect(Self.spillFolders(in: h.directory).count == 1)
        }
    }

    /// The spill folders under a cache directory (`bodies/<namespace>/spill`).
    static func spillFolders(in directory: URL) -> [URL] {
        let bodies = directory.appendingPathComponent("bodies")
        return ((try? FileManager.default.contentsOfDirectory(atPath: bodies.path)) ?? []).map {
            bodies.appendingPathComponent($0).appendingPathComponent("spill")
        }.filter { FileManager.default.fileExists(atPath: $0.path) }
    }
}
