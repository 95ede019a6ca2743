import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What went wrong, said plainly.
struct FloorError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The text of the last system call's error.
func errorText() -> String { String(cString: strerror(errno)) }

// The system calls under names of their own, since `BodyLayout` has methods called `open` and
// `close`.
func openDescriptor(_ path: String, _ flags: Int32) -> Int32 { open(path, flags, 0o644) }
func closeDescriptor(_ fd: Int32) { _ = close(fd) }

/// CPU and wall time per operation of one measured run.
struct Measurement {
    var cpu: Double
    var system: Double
    var wall: Double

    /// Runs `operation` `count` times; microseconds per run.
    static func of(count: Int, _ operation: () throws -> Void) throws -> Measurement {
        let (user0, system0) = usage()
        let wall0 = now()
        for _ in 0..<count { try operation() }
        let wall1 = now()
        let (user1, system1) = usage()
        let perRun = { (seconds: Double) in seconds * 1e6 / Double(count) }
        return Measurement(
            cpu: perRun(user1 - user0 + system1 - system0), system: perRun(system1 - system0),
            wall: perRun(wall1 - wall0))
    }

    /// The median of each figure apart.
    static func median(_ samples: [Measurement]) -> Measurement {
        func middle(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
        return Measurement(
            cpu: middle(samples.map(\.cpu)), system: middle(samples.map(\.system)), wall: middle(samples.map(\.wall)))
    }

    private static func usage() -> (user: Double, system: Double) {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
