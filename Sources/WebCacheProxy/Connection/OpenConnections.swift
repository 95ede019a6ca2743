import NIOConcurrencyHelpers
import NIOCore

/// The client connections open now: admitted up to a limit, asked to finish on shutdown, and
/// closed when they do not in time.
final class OpenConnections: Sendable {
    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Admits `channel` unless the limit is reached; an admitted channel leaves when it closes.
    func admit(_ channel: any Channel) -> Bool {
        let id = ObjectIdentifier(channel)
        let admitted = channels.withLockedValue { open in
            guard open.count < limit else { return false }
            open[id] = channel
            return true
        }
        if admitted {
            channel.closeFuture.whenComplete { _ in self.channels.withLockedValue { $0[id] = nil } }
        }
        return admitted
    }

    var count: Int { channels.withLockedValue { $0.count } }

    /// Asks every connection to finish its request in flight and close (idle ones close at
    /// once), waits up to `timeout`, then closes whatever is left. Not cut short by
    /// cancellation: it runs when the proxy is being stopped.
    func drain(timeout: Duration, on eventLoop: any EventLoop) async {
        let open = channels.withLockedValue { Array($0.values) }
        guard !open.isEmpty else { return }
        for channel in open {
            channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
        let closeRest = eventLoop.scheduleTask(in: .nanoseconds(timeout.nanoseconds)) {
            for channel in open { channel.close(promise: nil) }
        }
        try? await EventLoopFuture.andAllComplete(open.map(\.closeFuture), on: eventLoop).get()
        closeRest.cancel()
    }
}
