/// Hashes of keys seen once, for memos that keep a value only for a key seen before: where every
/// key is new (a crawler, a preloader, first visits), keeping each value would cost an insertion
/// and, the table being full, a value let go — per key, never used.
///
/// One slot per hash (its low bits), so noting and finding one is a single array access: a later
/// key whose hash falls in the same slot takes it, and the earlier one counts as unseen again.
package struct SeenOnce: Sendable {
    private var slots: [Int]

    /// Room for `slots` hashes (rounded up to a power of two; 8 bytes each).
    package init(slots: Int) {
        var count = 1
        while count < slots { count <<= 1 }
        self.slots = [Int](repeating: Self.emptySlot, count: count)
    }

    /// A slot no hash is noted in (a key whose hash is this counts as unseen every time).
    private static let emptySlot = 0

    /// Whether `hash` was noted before, and forgets it then; otherwise notes it.
    package mutating func seenBefore(_ hash: Int) -> Bool {
        let slot = hash & (slots.count - 1)
        if slots[slot] == hash && hash != Self.emptySlot {
            slots[slot] = Self.emptySlot
            return true
        }
        slots[slot] = hash
        return false
    }

    /// Notes `hash` as seen, so that the next ``seenBefore(_:)`` of it is `true`.
    package mutating func note(_ hash: Int) {
        slots[hash & (slots.count - 1)] = hash
    }
}
