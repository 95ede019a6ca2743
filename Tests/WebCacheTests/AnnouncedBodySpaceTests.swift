#if os(Linux)
import Foundation
import Glibc
import Testing
import WebCache
import WebCacheTestSupport

/// A body whose origin announces its length has its file's blocks from the start (Linux); what
/// does not arrive is given back.
@Suite("The blocks of an announced body")
struct AnnouncedBodySpaceTests {
    static let body = Fixtures.patternedBytes(3_000_000)

    /// Sizes and bytes on disk of the body files under `directory`.
    static func bodyFileSpace(in directory: URL) -> [(size: Int, onDisk: Int)] {
        bodyFiles(in: directory).compactMap { file in
            var info = stat()
            guard stat(file.path, &info) == 0 else { return nil }
            return (Int(info.st_size), Int(info.st_blocks) * 512)
        }
    }

    @Test("the file has blocks for the whole Content-Length while the body is still arriving, and keeps only its own")
    func reservedWhileArriving() async throws {
        try await EngineHarness.run { h in
            let rest = OriginGate()
            h.origin.route("/video.mp4") { _ in
                var response = TestOrigin.Response(headers: [("Cache-Control", "max-age=600")], body: Self.body)
                response.pauseAfter = 100_000
                response.pauseUntil = rest
                return response
            }
            let download = Task { try await h.get("/video.mp4") }
            var arriving: [(size: Int, onDisk: Int)] = []
            // Bounded: the first 100,000 bytes come at once from a local origin.
            for _ in 0..<1000 where arriving.isEmpty {
                arriving = Self.bodyFileSpace(in: h.directory).filter { $0.size > 0 }
                if arriving.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
            }
            rest.open()
            let answer = try await download.value
            #expect(byteDifference(answer.body, Self.body) == nil)
            let file = try #require(arriving.first, "no body file appeared while the body arrived")
            #expect(file.size < Self.body.count)
            #expect(file.onDisk >= Self.body.count, "only \(file.onDisk) bytes on disk for \(file.size) written")

            await h.cache.waitForBackgroundWork()
            let stored = Self.bodyFileSpace(in: h.directory)
            #expect(stored.map(\.size) == [Self.body.count])
            #expect(stored.allSatisfy { $0.onDisk < Self.body.count + 100_000 })
        }
    }

    @Test("a body cut short of its Content-Length is stored as the part that arrived, on that part's blocks alone")
    func cutShortGivesBack() async throws {
        try await EngineHarness.run(rules: .shared) { h in
            h.origin.route("/cut.bin") { _ in
                var response = TestOrigin.Response(
                    headers: [("Cache-Control", "max-age=600"), ("ETag", "\"c1\"")], body: Self.body)
                response.cutAfter = 100_000
                return response
            }
            await #expect(throws: (any Error).self) { _ = try await h.get("/cut.bin") }
            await h.cache.waitForBackgroundWork()
            let stored = Self.bodyFileSpace(in: h.directory)
            #expect(stored.count == 1)
            #expect(stored.allSatisfy { $0.size <= 100_000 && $0.onDisk < 200_000 }, "\(stored)")
            let part = try await h.get("/cut.bin", ["Range: bytes=0-99"])
            #expect(part.isFromCache && part.body == Self.body.prefix(100))
        }
    }
}
#endif
