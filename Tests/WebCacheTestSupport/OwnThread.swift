import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs `body`, which blocks or computes for long, on a new thread and waits for it without
/// holding a thread of the cooperative pool.
///
/// The pool has one thread per core (two on the machines CI uses), and Swift Testing runs every
/// test's tasks on it at once: a test that blocks a pool thread for seconds (a semaphore, a
/// child process, a blocking socket) holds up every other test's tasks for as long, and those
/// with a deadline on the wall clock then fail for no fault of theirs.
public func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// ``onOwnThread(_:)`` for `body` that throws.
public func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Runs `body`, seconds of computation, on a new thread of the lowest priority: it takes the
/// processor time other tests leave, instead of half of it (two cores, and tests with deadlines
/// on the wall clock).
public func inBackground<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            #if canImport(Glibc)
            // Linux gives each thread its own nice value; 0 is the calling thread.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
            #endif
            continuation.resume(returning: body())
        }
        thread.qualityOfService = .background
        thread.start()
    }
}
