import Testing
import WebCacheStore

@Suite("Durations in nanoseconds")
struct DurationNanosecondsTests {
    @Test("whole nanoseconds, and the most 64 bits hold past them, never a trap")
    func saturating() {
        #expect(Duration.seconds(2).nanoseconds == 2_000_000_000)
        #expect(Duration.milliseconds(1_500).nanoseconds == 1_500_000_000)
        #expect(Duration.nanoseconds(-7).nanoseconds == -7)
        #expect(Duration.seconds(10_000_000_000).nanoseconds == .max)
        #expect(Duration.seconds(-10_000_000_000).nanoseconds == .min)
        #expect(Duration.seconds(Int64.max).nanoseconds == .max)
    }
}
