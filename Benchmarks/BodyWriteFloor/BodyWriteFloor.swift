import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What writing a response body costs the writing process, by how bodies are laid out on disk:
/// a measuring stick for the store's body files, not a store (no index, no checksum, no reads).
///
/// Each layout writes bodies of one size, in 64 KiB pieces as a socket would hand them over:
/// `--capacity` of them to fill it (not counted), then as many again, each making room for
/// itself first-in first-out, as a full cache does:
/// - `files`: a file per body, as the store did before spare files — created under its final
///   name in one of 256 folders and written; the oldest unlinked when over capacity.
/// - `spares`: as the store does now — the oldest body's file, when over capacity, is locked
///   and renamed in its folder (emptied first once the spare files hold a sixteenth of the
///   capacity), and the next body is written over it under that name; a file is made only when
///   there is no spare one.
/// - `segments`: bodies appended to 64 MiB files; a full one is left and a new one created; the
///   oldest unlinked when over capacity. No file per body, but every page is newly allocated.
/// - `ring`: the same files made and written once beforehand (not counted), then overwritten in
///   turn, as Traffic Server's cache does: the blocks are allocated and the pages cached.
///
/// Reported: the process's CPU (user and system, `getrusage`) and wall time per body, medians of
/// alternating rounds. The kernel's writeback runs in its own threads and is not counted, for
/// any layout.
@main
struct BodyWriteFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "body-write-floor",
        abstract: "Write response bodies as files, appended segments or a ring of segments (a benchmark's floor).")

    @Option(help: "A folder to write in (a scratch folder is made inside and removed).")
    var directory: String

    @Option(help: "Body sizes, comma-separated, with k or m; at least 4k (the store keeps up to 16k in its index).")
    var sizes: String = "32k,128k,1m"

    @Option(help: "MiB kept on disk before the oldest bodies make room.")
    var capacity: Int = 256

    @Option(help: "Alternating rounds of every layout at each size.")
    var rounds: Int = 3

    @Option(help: "Layouts to write, comma-separated (files, spares, segments, ring; default: all).")
    var layouts: String = "files,spares,segments,ring"

    /// `--layouts` as kinds; a name that is not a layout is left out (and `validate` says so).
    var chosenLayouts: [BodyLayout.Kind] {
        layouts.split(separator: ",").compactMap { BodyLayout.Kind(rawValue: String($0)) }
    }

    func validate() throws {
        guard capacity >= 128 else { throw ValidationError("--capacity is at least 128 (MiB)") }
        guard rounds >= 1 else { throw ValidationError("--rounds is at least 1") }
        guard !bodySizes.isEmpty else { throw ValidationError("--sizes names no size: \(sizes)") }
        guard chosenLayouts.count == layouts.split(separator: ",").count, !chosenLayouts.isEmpty else {
            throw ValidationError("--layouts names a layout that is not files, spares, segments or ring: \(layouts)")
        }
        for size in bodySizes where size > BodyLayout.segmentSize || size < 4 << 10 {
            throw ValidationError("a body of \(size) bytes is too large for a segment or smaller than 4k")
        }
    }

    /// `--sizes` in bytes; a size that does not parse is left out (and `validate` says so).
    var bodySizes: [Int] {
        sizes.split(separator: ",").compactMap { text -> Int? in
            let lower = text.lowercased()
            let scale = lower.hasSuffix("m") ? 1 << 20 : lower.hasSuffix("k") ? 1 << 10 : 1
            guard let value = Int(scale == 1 ? lower : String(lower.dropLast())), value > 0 else { return nil }
            return value * scale
        }
    }

    func run() throws {
        let scratch = "\(directory)/body-write-floor-\(getpid())"
        guard mkdir(scratch, 0o755) == 0 else { throw FloorError("cannot make \(scratch): \(errorText())") }
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let capacityBytes = capacity << 20
        print("| size | layout | CPU µs per body | of which system | wall µs per body |")
        print("| --- | --- | --- | --- | --- |")
        for size in bodySizes {
            var samples: [BodyLayout.Kind: [Measurement]] = [:]
            for round in 0..<rounds {
                for kind in chosenLayouts {
                    let folder = "\(scratch)/\(kind)-\(size)-\(round)"
                    var layout = try BodyLayout(kind: kind, folder: folder, capacity: capacityBytes)
                    // Filled first (not counted), so that every body measured makes room for itself.
                    let count = capacityBytes / size
                    for _ in 0..<count { try layout.write(size: size) }
                    samples[kind, default: []].append(try Measurement.of(count: count) { try layout.write(size: size) })
                    layout.close()
                    try? FileManager.default.removeItem(atPath: folder)
                }
            }
            for kind in chosenLayouts {
                let median = Measurement.median(samples[kind] ?? [])
                print(
                    "| \(size >> 10) KB | \(kind) | \(format(median.cpu)) | \(format(median.system)) | \(format(median.wall)) |"
                )
            }
        }
        print()
        print(
            "medians of \(rounds) alternating rounds; \(capacity) MiB kept and as much written when full, in \(directory)"
        )
    }

    private func format(_ value: Double) -> String {
        value < 10 ? String(format: "%.1f", value) : String(Int(value.rounded()))
    }
}
