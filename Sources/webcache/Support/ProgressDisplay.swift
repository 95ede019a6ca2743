import Foundation
import WebCachePreload

/// Shows a preload's progress on stderr: a bar redrawn in place on a terminal, one line per
/// resource otherwise (logs, CI).
final class ProgressDisplay {
    private let interactive: Bool
    private var started = 0
    private var done = 0
    private var failed = 0
    private var bytes = 0

    init(interactive: Bool) {
        self.interactive = interactive
    }

    func show(_ event: PreloadEvent) {
        switch event {
        case .started:
            started += 1
        case .finished(let result):
            done += 1
            bytes += result.bytes
            if !interactive {
                line(
                    "ok    \(result.fromCache ? "cache " : "origin") \(formatBytes(result.bytes).padded(9)) \(result.url.absoluteString)"
                )
            }
        case .failed(let result):
            done += 1
            failed += 1
            line("FAIL  \(result.url.absoluteString): \(result.failure ?? "?")", always: true)
        case .pageFinished(let report):
            if !interactive {
                line("page  \(report.page.absoluteString): \(report.isComplete ? "complete" : "INCOMPLETE")")
            }
        case .completed:
            break
        }
        if interactive { drawBar() }
    }

    func end() {
        if interactive { StandardStreams.writeError("\r\u{1B}[K") }
    }

    private func drawBar() {
        let width = 30
        let filled = started == 0 ? 0 : width * done / max(started, 1)
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let text =
            "\r\u{1B}[K\(bar) \(done)/\(started) resources, \(formatBytes(bytes))\(failed > 0 ? ", \(failed) failed" : "")"
        StandardStreams.writeError(text)
    }

    private func line(_ text: String, always: Bool = false) {
        guard always || !interactive else { return }
        StandardStreams.writeError((interactive ? "\r\u{1B}[K" : "") + text + "\n")
    }
}

/// The table printed after a preload.
enum PreloadSummary {
    static func print(_ reports: [PageReport]) {
        printTable(
            ["PAGE", "RESOURCES", "BYTES", "FROM CACHE", "FAILED", "STATUS"],
            reports.map { report in
                [
                    report.page.absoluteString, String(report.resources.count), formatBytes(report.bytes),
                    String(report.resources.filter(\.fromCache).count), String(report.failures.count),
                    status(of: report),
                ]
            })
        for report in reports where !report.isComplete {
            for failure in report.failures { Swift.print("  \(failure.url.absoluteString): \(failure.failure ?? "?")") }
        }
        let kept = reports.filter { !$0.keptOffline.isEmpty }
        if !kept.isEmpty {
            Swift.print(
                "\(kept.count) page(s) kept as they were: the origin was unreachable or silent, the stored copies stay usable offline."
            )
        }
    }

    private static func status(of report: PageReport) -> String {
        var words: [String] = [report.isComplete ? "complete" : "incomplete"]
        let kept = report.keptOffline.count
        if kept == report.resources.count {
            words = [report.isComplete ? "kept as it was (offline)" : "incomplete, kept offline"]
        } else if kept > 0 {
            words.append("\(kept) kept as it was (offline)")
        }
        if report.isPinned { words.append("pinned") }
        return words.joined(separator: ", ")
    }
}

extension String {
    func padded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
