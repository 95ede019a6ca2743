import HTTPCaching
import Testing

@Suite("Keys seen lately, for memos of values that stand briefly")
struct SeenRecentlyTests {
    private static let second: UInt64 = 1_000_000_000

    /// Whether each (hash, time) in turn was seen recently.
    private static func sightings(_ seen: inout SeenRecently, _ visits: [(Int, UInt64)]) -> [Bool] {
        visits.map { seen.seenRecently($0.0, now: $0.1) }
    }

    @Test("a hash seen less than the window before counts as seen; one seen longer ago, or never, does not")
    func window() {
        let second = Self.second
        var seen = SeenRecently(slots: 100, window: .seconds(1))  // 128 slots
        #expect(seen.window == second)
        let found = Self.sightings(
            &seen,
            [
                (7, 10 * second), (7, 10 * second + second / 2),
                (7, 11 * second + second / 4),  // 0.75 s after the last time (1.25 s after the first)
                (7, 12 * second + second / 4),  // exactly the window after
                (8, 0), (8, 1),  // time 0 is a time like any other
                (0, 5), (0, 6),  // and hash 0 a hash
            ])
        #expect(found == [false, true, true, false, false, true, false, true])
    }

    @Test("another hash in the same slot takes it; a clock that went back counts as unseen")
    func slotsAndClocks() {
        let second = Self.second
        var seen = SeenRecently(slots: 100, window: .seconds(1))
        let found = Self.sightings(
            &seen,
            [
                (42, second), (42 + 128, second),
                (42, second),  // taken by the other
                (42, second / 2),  // seen later than now
                (42, second / 2 + 1),
            ])
        #expect(found == [false, false, false, false, true])
    }

    @Test("a hash noted counts as seen within the window after the note")
    func noted() {
        let second = Self.second
        var seen = SeenRecently(slots: 100, window: .milliseconds(500))
        seen.note(9, now: 3 * second)
        let soon = seen.seenRecently(9, now: 3 * second + second / 4)
        seen.note(9, now: 4 * second)
        let late = seen.seenRecently(9, now: 5 * second)
        #expect(soon && !late)
    }
}
