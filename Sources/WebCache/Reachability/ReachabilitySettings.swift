/// How long an origin that could not be reached is left alone before the cache tries it again.
///
/// After a connection to an origin (scheme, host, port) fails, requests for it skip the
/// connection attempt for a back-off window and are answered offline at once; the window
/// doubles with each failed attempt, from ``initialBackoff`` up to ``maximumBackoff``, and any
/// answer from the origin ends it.
public struct ReachabilitySettings: Sendable, Hashable {
    /// The first window, after one failed connection.
    public var initialBackoff: Duration
    /// The longest window.
    public var maximumBackoff: Duration
    /// How many unreachable origins are remembered, in memory and in the store. A proxy asked
    /// for names that do not resolve (typing, trackers, a client making them up) would otherwise
    /// remember each one for good. Past this many, the origin due to be tried again soonest is
    /// forgotten, as if it had answered: its next request connects. At least 1.
    public var maximumOrigins: Int

    /// Creates settings; the default goes 1 s, 2 s, 4 s … up to 60 s, for up to 1,024 origins.
    public init(
        initialBackoff: Duration = .seconds(1), maximumBackoff: Duration = .seconds(60), maximumOrigins: Int = 1024
    ) {
        self.initialBackoff = initialBackoff
        self.maximumBackoff = max(initialBackoff, maximumBackoff)
        self.maximumOrigins = max(1, maximumOrigins)
    }

    /// The window after `failures` failed attempts in a row, in seconds.
    public func window(afterFailures failures: Int) -> Double {
        let initial = initialBackoff.seconds
        let doublings = min(max(failures, 1), 31) - 1  // never past 30, and no overflow either way
        return min(initial * Double(1 << doublings), maximumBackoff.seconds)
    }
}

extension Duration {
    /// The duration in seconds, as a floating-point number.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
