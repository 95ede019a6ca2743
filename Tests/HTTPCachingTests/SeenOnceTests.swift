import HTTPCaching
import Testing

@Suite("Keys seen once, for memos that keep only what comes back")
struct SeenOnceTests {
    @Test("a hash is new the first time, seen the second, and new again after; another in its slot takes it")
    func seenBefore() {
        var seen = SeenOnce(slots: 100)  // 128 slots
        #expect(!seen.seenBefore(7) && seen.seenBefore(7) && !seen.seenBefore(7))
        #expect(!seen.seenBefore(42) && !seen.seenBefore(42 + 128))  // the same slot: the later one takes it
        #expect(!seen.seenBefore(42) && seen.seenBefore(42))
        #expect(!seen.seenBefore(0) && !seen.seenBefore(0), "the empty slot's value is never seen")
    }

    @Test("a hash noted counts as seen the next time it comes")
    func noted() {
        var seen = SeenOnce(slots: 100)
        seen.note(9)
        #expect(seen.seenBefore(9) && !seen.seenBefore(9))
    }
}
