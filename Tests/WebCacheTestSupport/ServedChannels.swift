import Foundation
import NIOCore

/// A test server's listening channel and the connections it accepted, closed together, as a
/// server that goes away would close them.
final class ServedChannels: @unchecked Sendable {
    private let lock = NSLock()
    private var listener: (any Channel)?
    private var connections: [ObjectIdentifier: any Channel] = [:]
    private var acceptedCount = 0

    /// Connections accepted so far.
    var accepted: Int { lock.withLock { acceptedCount } }

    /// Connections open now.
    var open: Int { lock.withLock { connections.count } }

    /// The port listened on, once listening.
    var port: Int { lock.withLock { listener?.localAddress?.port ?? 0 } }

    /// Keeps `connection` until it closes.
    func track(_ connection: any Channel) {
        let id = ObjectIdentifier(connection)
        lock.withLock {
            acceptedCount += 1
            connections[id] = connection
        }
        connection.closeFuture.whenComplete { [self] _ in _ = lock.withLock { connections.removeValue(forKey: id) } }
    }

    /// Records the listening channel.
    func listen(on channel: any Channel) {
        lock.withLock { listener = channel }
    }

    /// Stops listening and closes every connection.
    func closeAll() async throws {
        let (listener, open) = lock.withLock { () -> ((any Channel)?, [any Channel]) in
            defer {
                self.listener = nil
                connections.removeAll()
            }
            return (self.listener, Array(connections.values))
        }
        try await listener?.close()
        for connection in open { try? await connection.close() }
    }

    /// Closes every connection and goes on listening (an origin dropping its kept-alive
    /// connections, as servers do after their keep-alive timeout).
    func closeConnections() async {
        let open = lock.withLock { Array(connections.values) }
        for connection in open { try? await connection.close() }
    }
}
