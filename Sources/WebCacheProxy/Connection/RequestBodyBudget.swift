import NIOConcurrencyHelpers

/// The bytes of request bodies the proxy holds in memory at once, over all its connections
/// (``ProxyConfiguration/maximumBufferedRequestBodies``).
///
/// A request's body is held whole until its exchange with the origin ends, so without a bound
/// shared by the connections a thousand clients each sending up to the largest body accepted
/// would hold a thousand times that. A request declaring its length reserves it when its head
/// arrives; a chunked one reserves as its chunks come. What cannot be reserved is refused
/// (503 with `Retry-After`), and a request gives back what it reserved once answered.
final class RequestBodyBudget: Sendable {
    /// The bytes that may be held at once.
    let limit: Int
    private let held = NIOLockedValueBox(0)

    init(limit: Int) {
        self.limit = max(0, limit)
    }

    /// Takes `bytes` from the budget; false, taking nothing, when fewer are left.
    func reserve(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        return held.withLockedValue { held in
            guard bytes <= limit - held else { return false }
            held += bytes
            return true
        }
    }

    /// Gives back `bytes` taken by ``reserve(_:)``.
    func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        held.withLockedValue { held in held = max(0, held - bytes) }
    }

    /// The bytes reserved now.
    var bytesHeld: Int { held.withLockedValue { $0 } }
}
