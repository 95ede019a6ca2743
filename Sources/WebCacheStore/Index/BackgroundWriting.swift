#if canImport(Glibc)
@preconcurrency import Glibc
#elseif canImport(Musl)
@preconcurrency import Musl
#endif

/// The index writer as background work: on Linux its thread runs under `SCHED_BATCH` while it
/// writes a batch, and gets its own policy back before it returns to the pool.
///
/// Why: a miss on an event loop hands its row to the writer and goes on serving. When the
/// writer's thread shares a core with the loop (a proxy given one core, a container with a
/// one-CPU quota), an ordinary thread woken for the first row preempts the loop at once and
/// commits that row alone, and the next, and the next: a transaction, a journal append and two
/// context switches per miss (measured: about three rows per transaction at 64 concurrent
/// misses). A batch thread is not favoured at wakeup, so it writes when the loop waits for the
/// network or its time slice ends, with every row that arrived meanwhile — it still gets its
/// fair share of the core under load. On a machine with cores to spare nothing changes: the
/// writer starts on another one as before.
enum BackgroundWriting {
    /// Runs `body` with the calling thread scheduled as background batch work (Linux), then
    /// restores its policy; elsewhere, just runs `body`.
    static func run<Result>(_ body: () throws -> Result) rethrows -> Result {
        #if os(Linux)
        let previous = sched_getscheduler(0)
        guard previous == Self.ordinaryPolicy, setPolicy(Self.batchPolicy) else { return try body() }
        defer { _ = setPolicy(previous) }
        #endif
        return try body()
    }

    #if os(Linux)
    /// `SCHED_OTHER` and `SCHED_BATCH` (`<sched.h>`; the latter is not imported into Swift).
    static let ordinaryPolicy: Int32 = 0
    static let batchPolicy: Int32 = 3

    /// The calling thread's policy (Linux schedules threads: `0` is this thread); `false` when
    /// the system refused, which changes nothing but the speed.
    private static func setPolicy(_ policy: Int32) -> Bool {
        var parameters = sched_param(sched_priority: 0)
        return sched_setscheduler(0, policy, &parameters) == 0
    }
    #endif
}
