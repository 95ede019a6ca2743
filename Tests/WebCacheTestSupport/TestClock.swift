import Foundation

/// A clock tests move by hand: the store's and the engine's `now`, shared by every test target.
public final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    /// A clock at `start` (``Fixtures/epoch`` unless given).
    public init(start: Date = Fixtures.epoch) {
        current = start
    }

    /// The time now.
    public var now: Date { lock.withLock { current } }

    /// Moves the clock on by `seconds`.
    public func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }
}
