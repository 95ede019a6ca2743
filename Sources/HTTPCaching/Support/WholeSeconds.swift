#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whole seconds for lifetimes and intervals the cache did not work out itself — an app's TTL,
/// a time read back from the index — which may lie beyond any date or be no number at all,
/// where `Int(_:)` of a `Double` would trap.
package enum WholeSeconds {
    /// The most seconds counted either way: 2^31 (about 68 years), RFC 9111's cap for
    /// delta-seconds (§1.2.2).
    package static let limit = DeltaSeconds.maximum

    /// `seconds` within ±``limit``.
    package static func clamped(_ seconds: Int) -> Int {
        min(max(seconds, -limit), limit)
    }

    /// `interval` rounded down to whole seconds, within ±``limit``; not a number counts as
    /// `-limit` (long past).
    package static func roundedDown(_ interval: TimeInterval) -> Int {
        Int(bounded(interval).rounded(.down))
    }

    /// `interval` rounded up to whole seconds, within ±``limit``; not a number counts as
    /// `-limit` (long past).
    package static func roundedUp(_ interval: TimeInterval) -> Int {
        Int(bounded(interval).rounded(.up))
    }

    private static func bounded(_ interval: TimeInterval) -> TimeInterval {
        guard !interval.isNaN else { return -Double(limit) }
        return min(max(interval, -Double(limit)), Double(limit))
    }
}
