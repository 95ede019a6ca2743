#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Hashes of keys with the time each was last seen, for memos whose values stand only briefly:
/// a value worth keeping is one whose key comes back before the value stops standing.
///
/// An encoded answer stands for the second its `Age` reads the same. Where a key last came more
/// than that before, its next request is likely to come too late as well: a shared proxy in front
/// of tens of thousands of pages, each asked for every few seconds, would otherwise encode and
/// keep an answer on nearly every request and use none of them. ``SeenOnce`` cannot tell: it says
/// a key came before however long ago.
///
/// One slot per hash (its low bits), as in ``SeenOnce``: a later key whose hash falls in the
/// same slot takes it, and the earlier one counts as unseen again.
package struct SeenRecently: Sendable {
    private struct Slot {
        var hash: Int
        /// When it was seen (the caller's clock, in nanoseconds), plus one: 0 is never seen.
        var seenAt: UInt64
    }

    private var slots: [Slot]
    /// How long ago a key may have last been seen to count as seen recently, in nanoseconds.
    package let window: UInt64

    /// Room for `slots` hashes (rounded up to a power of two; 16 bytes each); a key counts as
    /// seen recently when it was seen less than `window` before.
    package init(slots: Int, window: Duration) {
        var count = 1
        while count < slots { count <<= 1 }
        self.slots = [Slot](repeating: Slot(hash: 0, seenAt: 0), count: count)
        let (seconds, attoseconds) = window.components
        self.window = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// Whether `hash` was seen less than ``window`` before `now` (the caller's clock, in
    /// nanoseconds; a sighting later than `now`, from a clock set back, counts as none); it is
    /// noted as seen at `now` either way.
    package mutating func seenRecently(_ hash: Int, now: UInt64) -> Bool {
        let index = hash & (slots.count - 1)
        let slot = slots[index]
        slots[index] = Slot(hash: hash, seenAt: now &+ 1)
        guard slot.hash == hash, slot.seenAt != 0, now &+ 1 >= slot.seenAt else { return false }
        return now &+ 1 - slot.seenAt < window
    }

    /// `date` as this type's times: nanoseconds since 1970 (0 before).
    package static func time(_ date: Date) -> UInt64 {
        UInt64(max(0, date.timeIntervalSince1970) * 1e9)
    }

    /// Notes `hash` as seen at `now`, so that ``seenRecently(_:now:)`` within the window says so.
    package mutating func note(_ hash: Int, now: UInt64) {
        slots[hash & (slots.count - 1)] = Slot(hash: hash, seenAt: now &+ 1)
    }
}
