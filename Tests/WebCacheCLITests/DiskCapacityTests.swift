import Foundation
import Testing
import WebCacheTestSupport

@testable import webcache

@Suite("--disk-capacity and --memory-capacity: sizes, and a capacity the directory remembers")
struct DiskCapacityTests {
    @Test(
        "sizes as the options read them",
        arguments: [
            ("1048576", 1_048_576), ("0", 0), ("512k", 524_288), ("512K", 524_288), ("512kb", 524_288),
            ("512KiB", 524_288), ("64m", 67_108_864), ("64MiB", 67_108_864), ("2g", 2_147_483_648),
            ("2GB", 2_147_483_648), ("1.5GiB", 1_610_612_736), ("0.5k", 512), ("1t", 1_099_511_627_776),
            ("7b", 7),
        ])
    func sizes(text: String, bytes: Int) {
        #expect(ByteCount.parse(text) == bytes)
    }

    @Test(
        "what is not a size",
        arguments: [
            "", "k", "-1", "-1k", "1.5", "1.k", ".5k", "1.2.3k", "12 k", "1e6", "0x10", "5ib", "5q", "1.5555k",
            "99999999999999999999", "9999999999t", "８k",
        ])
    func notSizes(text: String) {
        #expect(ByteCount.parse(text) == nil)
    }

    @Test("a capacity given once keeps the cache at that size for the commands after it that name none")
    func recordedCapacity() async throws {
        let origin = TestOrigin()
        try await origin.start()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let body = String(repeating: "x", count: 2048)
        for name in ["one", "two", "three"] {
            origin.route("/\(name)") { _ in .text(body, headers: [("Cache-Control", "max-age=600")]) }
        }
        let dir = ["--cache-dir", directory.url.path]
        let url = { (name: String) in origin.url("/\(name)").absoluteString }

        // 3 KiB hold one 2 KiB body: the second stored pushes the first out.
        for name in ["one", "two"] {
            let result = try await WebCacheProcess.run(["get", url(name), "--disk-capacity", "3k"] + dir)
            #expect(result.status == 0, "\(result.error)")
        }
        let recorded = try String(
            contentsOf: directory.url.appendingPathComponent("disk-capacity"), encoding: .utf8)
        #expect(recorded == "3072\n")
        var listed = try await WebCacheProcess.run(["ls"] + dir)
        #expect(!listed.output.contains(url("one")) && listed.output.contains(url("two")), "\(listed.output)")

        // No option: the recorded 3 KiB still hold, so the third pushes the second out.
        let third = try await WebCacheProcess.run(["get", url("three")] + dir)
        #expect(third.status == 0, "\(third.error)")
        listed = try await WebCacheProcess.run(["ls"] + dir)
        #expect(!listed.output.contains(url("two")) && listed.output.contains(url("three")), "\(listed.output)")
        let stats = try await WebCacheProcess.run(["stats"] + dir)
        #expect(stats.output.contains("of 3.0 KB kept at most"), "\(stats.output)")

        // A larger capacity given later replaces the recorded one: both stay.
        _ = try await WebCacheProcess.run(["get", url("one"), "--disk-capacity", "1m"] + dir)
        _ = try await WebCacheProcess.run(["get", url("two")] + dir)
        listed = try await WebCacheProcess.run(["ls"] + dir)
        #expect(listed.output.contains(url("one")) && listed.output.contains(url("two")), "\(listed.output)")
        #expect(origin.count("/one") == 2 && origin.count("/two") == 2)
        try await origin.stop()
    }

    @Test("a recorded capacity that is not a number is named on standard error and ignored")
    func damagedRecord() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data("lots\n".utf8).write(to: directory.url.appendingPathComponent("disk-capacity"))
        let stats = try await WebCacheProcess.run(["stats", "--cache-dir", directory.url.path])
        #expect(stats.status == 0, "\(stats.error)")
        #expect(stats.error.contains("disk-capacity: not a number of bytes"))
        #expect(stats.output.contains("of 512.0 MB kept at most"), "\(stats.output)")
    }

    @Test(
        "a size that is not one is refused before anything runs", arguments: ["--disk-capacity", "--memory-capacity"])
    func refused(option: String) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let result = try await WebCacheProcess.run(["stats", option, "lots", "--cache-dir", directory.url.path])
        #expect(result.status == 64)
        #expect(result.error.contains("lots"))
        #expect(!FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("disk-capacity").path))
    }
}
