import Dispatch
import Foundation
import HTTPCaching
import Testing

@testable import WebCacheStore

#if canImport(Glibc)
import Glibc
#endif

@Suite("The index writer runs as background work")
struct BackgroundWritingTests {
    #if os(Linux)
    @Test("inside, the thread is a batch thread; after, it has its own policy back, also when the body throws")
    func batchPolicyWhileWritingOnly() throws {
        #expect(sched_getscheduler(0) == BackgroundWriting.ordinaryPolicy)
        let inside = BackgroundWriting.run { sched_getscheduler(0) }
        #expect(inside == BackgroundWriting.batchPolicy)
        #expect(sched_getscheduler(0) == BackgroundWriting.ordinaryPolicy)
        struct Refused: Error {}
        #expect(throws: Refused.self) { try BackgroundWriting.run { throw Refused() } }
        #expect(sched_getscheduler(0) == BackgroundWriting.ordinaryPolicy)
    }

    @Test("a thread that is not an ordinary one keeps its policy")
    func anotherPolicyIsLeftAlone() throws {
        // On a thread of its own: a thread made SCHED_IDLE (5) may not be allowed back.
        let seen = Locked<(set: Bool, inside: Int32, after: Int32)?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let thread = Thread {
            var parameters = sched_param(sched_priority: 0)
            let set = sched_setscheduler(0, 5, &parameters) == 0
            let inside = BackgroundWriting.run { sched_getscheduler(0) }
            seen.withLock { $0 = (set, inside, sched_getscheduler(0)) }
            finished.signal()
        }
        thread.start()
        finished.wait()
        let result = try #require(seen.withLock { $0 })
        #expect(result.set)
        #expect(result.inside == 5)
        #expect(result.after == 5)
    }
    #endif
}
