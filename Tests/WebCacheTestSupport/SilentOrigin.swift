import Foundation
import NIOCore
import NIOPosix

/// A server on 127.0.0.1 that accepts connections and never answers, as a captive portal or a
/// dead link looks to a client: connecting works, then nothing. Stop it with ``stop()``.
public final class SilentOrigin: Sendable {
    private let channels = ServedChannels()

    /// Creates a stopped server.
    public init() {}

    /// The port, once started.
    public var port: Int { channels.port }

    /// Connections accepted so far.
    public var connectionsAccepted: Int { channels.accepted }

    /// Starts listening on a free port.
    public func start() async throws {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [channels] channel in
                channels.track(channel)
                return channel.eventLoop.makeSucceededVoidFuture()
            }
        channels.listen(on: try await bootstrap.bind(host: "127.0.0.1", port: 0).get())
    }

    /// Stops listening and closes every connection.
    public func stop() async throws {
        try await channels.closeAll()
    }

    /// The absolute URL of `path` on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }
}
