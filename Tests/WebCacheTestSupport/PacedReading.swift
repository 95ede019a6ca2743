import Foundation
import NIOConcurrencyHelpers
import WebCache

extension TestOrigin {
    /// The connections still open once they have all closed or `limit` has passed (polled every
    /// 20 ms): a test that expects a client to give a connection up reads 0.
    public func connectionsOpen(afterWaitingAtMost limit: Duration) async throws -> Int {
        var open = connectionsOpen
        let deadline = ContinuousClock.now + limit
        while open > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            open = connectionsOpen
        }
        return open
    }
}

/// Reading an origin client's streamed body at a pace the test sets.
public enum PacedReading {
    /// Reads `stream`, a body of `count` bytes, taking nothing for `holding`, then reports what
    /// arrives as taken every 10 ms until all `count` bytes are (at most 5 s): the bytes that had
    /// arrived when the hold ended (what the client read without being told it was taken), and
    /// the whole body.
    public static func heldThenTaken(
        _ stream: OriginStream, of count: Int, pacing: OriginBodyPacing, holding: Duration
    ) async throws -> (held: Int, body: Data) {
        let received = NIOLockedValueBox(0)
        let reading = Task {
            var whole = Data()
            for try await chunk in stream.body {
                whole.append(chunk)
                received.withLockedValue { $0 += chunk.count }
            }
            return whole
        }
        try await Task.sleep(for: holding)
        let held = received.withLockedValue { $0 }
        var taken = 0
        for _ in 0..<500 where taken < count {
            let now = received.withLockedValue { $0 }
            pacing.taken(now - taken)
            taken = now
            try await Task.sleep(for: .milliseconds(10))
        }
        return (held, try await reading.value)
    }
}
