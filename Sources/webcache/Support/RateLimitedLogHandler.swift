import Foundation
import Logging

/// Passes at most `limit` messages per minute to standard error and then says how many it held
/// back: a full disk or a broken store logs what is wrong without flooding a long-running
/// proxy's log with one line per request.
struct RateLimitedLogHandler: LogHandler {
    private final class Budget: @unchecked Sendable {
        private let lock = NSLock()
        private var windowStart = Date()
        private var used = 0
        private var held = 0
        let limit: Int

        init(limit: Int) { self.limit = limit }

        /// Whether a message may go out now, and how many were held back before it.
        func take() -> (allowed: Bool, heldBack: Int) {
            lock.withLock {
                let now = Date()
                var heldBack = 0
                if now.timeIntervalSince(windowStart) >= 60 {
                    windowStart = now
                    used = 0
                    heldBack = held
                    held = 0
                }
                guard used < limit else {
                    held += 1
                    return (false, 0)
                }
                used += 1
                return (true, heldBack)
            }
        }
    }

    private var inner: StreamLogHandler
    private let budget: Budget

    /// A handler for `label` that lets `limit` messages a minute through.
    init(label: String, limit: Int = 20) {
        inner = StreamLogHandler.standardError(label: label)
        budget = Budget(limit: limit)
    }

    var logLevel: Logger.Level {
        get { inner.logLevel }
        set { inner.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        let (allowed, heldBack) = budget.take()
        guard allowed else { return }
        if heldBack > 0 {
            var notice = event
            notice.level = .warning
            notice.message = "\(heldBack) more message(s) held back in the last minute"
            notice.metadata = nil
            notice.error = nil
            inner.log(event: notice)
        }
        inner.log(event: event)
    }
}
