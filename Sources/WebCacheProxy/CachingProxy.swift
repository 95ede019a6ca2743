import HTTPCaching
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import WebCache
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP/1.1 caching proxy over an ``WebCache/HTTPCache`` (use shared-cache rules), in reverse
/// mode (one upstream) or forward mode (absolute-form requests).
///
/// ```swift
/// let proxy = CachingProxy(cache: cache, configuration: .init(port: 8080, upstream: URL(string: "http://127.0.0.1:8000")))
/// try await proxy.run()        // until the task is cancelled
/// ```
public final class CachingProxy: Sendable {
    let cache: HTTPCache
    let configuration: ProxyConfiguration
    let logger: Logger
    private let boundPort = Locked<Int?>(nil)

    /// Creates a proxy; nothing listens until ``run()``.
    public init(cache: HTTPCache, configuration: ProxyConfiguration, logger: Logger = Logger(label: "WebCacheProxy")) {
        self.cache = cache
        self.configuration = configuration
        self.logger = logger
    }

    /// The port the proxy listens on, once ``run()`` has bound it.
    public var port: Int? { boundPort.withLock { $0 } }

    /// Listens and serves until the calling task is cancelled; open connections finish their
    /// request in flight.
    public func run() async throws {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: configuration.host, port: configuration.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: channel)
                }
            }
        let bound = server.channel.localAddress?.port
        boundPort.withLock { $0 = bound }
        logger.info("listening on \(configuration.host):\(port ?? 0)\(configuration.upstream.map { " for \($0.absoluteString)" } ?? " (forward mode)")")
        try await withTaskCancellationHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        } onCancel: {
            server.channel.close(promise: nil)
        }
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        do {
            try await connection.executeThenClose { inbound, outbound in
                var head: HTTPRequestHead?
                var body = ByteBuffer()
                var tooLarge = false
                for try await part in inbound {
                    switch part {
                    case .head(let requestHead):
                        head = requestHead
                        body.clear()
                        tooLarge = false
                    case .body(var chunk):
                        if body.readableBytes + chunk.readableBytes > configuration.maximumRequestBodySize {
                            tooLarge = true
                        } else {
                            body.writeBuffer(&chunk)
                        }
                    case .end:
                        guard let requestHead = head else { continue }
                        let keepAlive = requestHead.isKeepAlive
                        let response = tooLarge
                            ? ProxyResponse.error(413, "the request body is larger than \(configuration.maximumRequestBodySize) bytes")
                            : await respond(to: requestHead, body: body)
                        try await write(response, to: outbound, keepAlive: keepAlive, method: requestHead.method)
                        if !keepAlive { return }
                        head = nil
                    }
                }
            }
        } catch {
            logger.debug("connection ended: \(error)")
        }
    }
}
