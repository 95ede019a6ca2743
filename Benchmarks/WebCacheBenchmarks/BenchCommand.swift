import ArgumentParser
import Foundation

/// `webcache-bench`: WebCache's benchmarks, each beside the real alternative in the same run.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webcache-bench",
        abstract: "Measure WebCache beside Foundation's URLCache and print a table.",
        discussion: "Build in release mode: swift run -c release webcache-bench [--json results.json]")

    @Option(help: "Also write the results as JSON to this file.")
    var json: String?

    @Flag(help: "Skip the slow 10^6-entry fill (about a minute).")
    var quick = false

    @Flag(help: "Run only the engine benchmarks (skip the store).")
    var engineOnly = false

    @Flag(help: "Run only the preload benchmark.")
    var preloadOnly = false

    @Flag(help: "Run only the offline benchmarks (time to the offline answer).")
    var offlineOnly = false

    func run() async throws {
        #if DEBUG
        print("warning: a debug build; run with -c release for meaningful figures")
        #endif
        let log: @Sendable (String) -> Void = { FileHandle.standardError.write(Data("… \($0)\n".utf8)) }
        var results: [Measurement] = []
        if offlineOnly {
            results = try await OfflineBenchmarks(log: log).run()
        } else {
            results = engineOnly || preloadOnly ? [] : try StoreBenchmarks(quick: quick, log: log).run()
            if !preloadOnly { results += try await EngineBenchmarks(log: log).run() }
            results += try await PreloadBenchmarks(log: log).run()
            if !preloadOnly { results += try await OfflineBenchmarks(log: log).run() }
        }
        printTable(results)
        if let json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let document = BenchReport(date: ISO8601DateFormatter().string(from: Date()), results: results)
            try encoder.encode(document).write(to: URL(fileURLWithPath: json))
            print("wrote \(json)")
        }
    }
}

struct BenchReport: Codable {
    var date: String
    var unit = "nanoseconds per operation (median)"
    var results: [Measurement]
}
