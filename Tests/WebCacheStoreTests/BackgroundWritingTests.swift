import Foundation
import Testing
import WebCacheTestSupport

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
    func anotherPolicyIsLeftAlone() async throws {
        // On a thread of its own: a thread made SCHED_IDLE (5) may not be allowed back.
        let result = await onOwnThread {
            var parameters = sched_param(sched_priority: 0)
            let set = sched_setscheduler(0, 5, &parameters) == 0
            let inside = BackgroundWriting.run { sched_getscheduler(0) }
            return (set: set, inside: inside, after: sched_getscheduler(0))
        }
        #expect(result.set)
        #expect(result.inside == 5)
        #expect(result.after == 5)
    }
    #endif
}
