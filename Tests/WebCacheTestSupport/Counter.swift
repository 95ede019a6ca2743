import Foundation

/// A thread-safe counter for route handlers: each ``next()`` is one more.
public final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var current = 0

    /// Starts at zero.
    public init() {}

    /// How many times ``next()`` was called.
    public var value: Int { lock.withLock { current } }

    /// Counts one more and returns the new count.
    public func next() -> Int {
        lock.withLock {
            current += 1
            return current
        }
    }
}
