import Foundation

/// One line of the results table.
struct Measurement: Codable, Sendable {
    var group: String
    var name: String
    /// Median time of one operation, in nanoseconds.
    var webCache: Double?
    /// The same operation on Foundation's URLCache, when measured.
    var urlCache: Double?
    var note: String?

    /// URLCache time divided by WebCache time: how many times faster WebCache is.
    var speedup: Double? {
        guard let webCache, let urlCache, webCache > 0 else { return nil }
        return urlCache / webCache
    }
}

/// Times `operation`: a warm-up, then `samples` samples of `iterations` runs each; returns the
/// median time of one run in nanoseconds. The median of samples resists a noisy machine.
func medianTime(samples: Int = 15, iterations: Int, warmup: Int = 3, _ operation: () throws -> Void) rethrows -> Double
{
    for _ in 0..<warmup { try operation() }
    var times: [Double] = []
    for _ in 0..<samples {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations { try operation() }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        times.append(Double(elapsed) / Double(iterations))
    }
    times.sort()
    return times[times.count / 2]
}

/// Formats nanoseconds for people: `850 ns`, `12.3 µs`, `4.10 ms`, `1.20 s`.
func formatDuration(_ nanoseconds: Double?) -> String {
    guard let ns = nanoseconds else { return "—" }
    switch ns {
    case ..<1000: return String(format: "%.0f ns", ns)
    case ..<1_000_000: return String(format: "%.1f µs", ns / 1000)
    case ..<1_000_000_000: return String(format: "%.2f ms", ns / 1_000_000)
    default: return String(format: "%.2f s", ns / 1_000_000_000)
    }
}

func printTable(_ results: [Measurement]) {
    let header = ["benchmark", "WebCache", "URLCache", "WebCache is", "note"]
    let rows = results.map { result -> [String] in
        [
            "\(result.group): \(result.name)", formatDuration(result.webCache), formatDuration(result.urlCache),
            result.speedup.map { String(format: "%.1f× faster", $0) } ?? "—", result.note ?? "",
        ]
    }
    var widths = header.map(\.count)
    for row in rows { for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) } }
    func line(_ cells: [String]) -> String {
        "| "
            + cells.enumerated().map { $1.padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(
                separator: " | ") + " |"
    }
    print(line(header))
    print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
    for row in rows { print(line(row)) }
}
