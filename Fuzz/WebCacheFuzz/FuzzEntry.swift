#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if FUZZING
/// libFuzzer's driver (built with `-sanitize=fuzzer`, which links libFuzzer; its own `main` is
/// not used because SwiftPM gives executables an entry point of their own).
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// The target chosen by `WEBCACHE_FUZZ_TARGET`.
private let target: String = {
    guard let name = ProcessInfo.processInfo.environment["WEBCACHE_FUZZ_TARGET"], FuzzTargets.names.contains(name)
    else {
        fatalError("set WEBCACHE_FUZZ_TARGET to one of \(FuzzTargets.names.joined(separator: ", "))")
    }
    return name
}()

/// libFuzzer's callback, also exported under its usual name (libFuzzer's archive refers to it).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    FuzzTargets.run(target, UnsafeRawBufferPointer(start: data, count: count))
    return 0
}

/// Runs libFuzzer on the target named by `WEBCACHE_FUZZ_TARGET` (scripts/fuzz.sh).
@main
struct FuzzDriver {
    static func main() {
        _ = target
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        let status = runFuzzerDriver(&argc, &argv, fuzzOne)
        exit(status)
    }
}
#else
/// Without libFuzzer: runs every file of the given corpus folders through their targets
/// (`Fuzz/corpus/<target>/…`), which is how the corpus guards against regressions in tests.
@main
struct CorpusReplay {
    static func main() throws {
        var runs = 0
        for folder in CommandLine.arguments.dropFirst() {
            let name = URL(fileURLWithPath: folder).lastPathComponent
            guard FuzzTargets.names.contains(name) else {
                fatalError("\(folder) is not named after a target: \(FuzzTargets.names)")
            }
            for file in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() {
                let data = try Data(contentsOf: URL(fileURLWithPath: folder).appendingPathComponent(file))
                data.withUnsafeBytes { FuzzTargets.run(name, $0) }
                runs += 1
            }
        }
        print("replayed \(runs) inputs")
    }
}
#endif
