import NIOConcurrencyHelpers
import NIOCore

/// Connections with whole answers written and not yet flushed, on one event loop: flushed
/// together once the loop has handled the I/O of its tick, by one task per tick rather than one
/// per answer (a task is an allocation and a trip through the loop's queue). Answers to the
/// connections that were readable in the same tick go out back to back, which wakes their
/// clients fewer times than one flush per answer. Used on its loop only, so its properties skip
/// the runtime's exclusivity check (see ``ProxyHTTPHandler``).
final class EndOfTickFlushes {
    private let loop: any EventLoop
    @exclusivity(unchecked) private var channels: [any Channel] = []
    /// The array flushed last time, empty, kept for its capacity.
    @exclusivity(unchecked) private var spare: [any Channel] = []

    init(loop: any EventLoop) {
        self.loop = loop
    }

    /// Flushes `channel` at the end of the loop's tick.
    func flush(_ channel: any Channel) {
        channels.append(channel)
        guard channels.count == 1 else { return }
        let bound = NIOLoopBound(self, eventLoop: loop)
        loop.execute { bound.value.flushAll() }
    }

    private func flushAll() {
        // A flush may lead to another answer on this loop (the next request waiting on a
        // connection), which then starts the next round.
        var due: [any Channel] = []
        swap(&due, &spare)
        swap(&due, &channels)
        for channel in due { channel.flush() }
        due.removeAll(keepingCapacity: true)
        spare = due
    }
}

/// One ``EndOfTickFlushes`` per event loop the proxy serves connections on.
final class EndOfTickFlushTable: Sendable {
    private let batches = NIOLockedValueBox([ObjectIdentifier: NIOLoopBound<EndOfTickFlushes>]())

    /// The batch of `loop`, made the first time a connection on it asks.
    func batch(for loop: any EventLoop) -> NIOLoopBound<EndOfTickFlushes> {
        batches.withLockedValue { batches in
            // The entry keeps its loop alive, so its identifier is never another loop's.
            if let batch = batches[ObjectIdentifier(loop)] { return batch }
            let batch = NIOLoopBound(EndOfTickFlushes(loop: loop), eventLoop: loop)
            batches[ObjectIdentifier(loop)] = batch
            return batch
        }
    }
}
