import Foundation
import NIOCore
import NIOPosix

/// A server on 127.0.0.1 that accepts connections and never answers, as a captive portal or a
/// dead link looks to a client: connecting works, then nothing. Stop it with ``stop()``.
public final class SilentOrigin: @unchecked Sendable {
    private let lock = NSLock()
    private var channel: (any Channel)?
    private var connections: [ObjectIdentifier: any Channel] = [:]
    private var accepted = 0

    /// The port, once started.
    public private(set) var port = 0

    /// Creates a stopped server.
    public init() {}

    /// Connections accepted so far.
    public var connectionsAccepted: Int { lock.withLock { accepted } }

    /// Starts listening on a free port.
    public func start() async throws {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [self] channel in
                let id = ObjectIdentifier(channel)
                lock.withLock {
                    accepted += 1
                    connections[id] = channel
                }
                channel.closeFuture.whenComplete { [self] _ in _ = lock.withLock { connections.removeValue(forKey: id) } }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        lock.withLock {
            self.channel = channel
            port = channel.localAddress?.port ?? 0
        }
    }

    /// Stops listening and closes every connection.
    public func stop() async throws {
        let (channel, open) = lock.withLock { () -> ((any Channel)?, [any Channel]) in
            defer {
                self.channel = nil
                connections.removeAll()
            }
            return (self.channel, Array(connections.values))
        }
        try await channel?.close()
        for connection in open { try? await connection.close() }
    }

    /// The absolute URL of `path` on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }
}
