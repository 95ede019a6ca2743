/// A reader iterating a ``BodyBroadcast``: the body learns the reader stopped when this goes.
final class BodyLease: Sendable {
    private let body: BodyBroadcast

    init(body: BodyBroadcast) {
        self.body = body
    }

    deinit {
        body.leaseEnded()
    }
}
