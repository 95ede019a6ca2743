import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Serves ``SampleSite`` over HTTP/1.1 on loopback, as an origin would: `Cache-Control`, `ETag`,
/// 304 for matching `If-None-Match`, 404 for anything else, and an optional latency per response
/// (to show what preloading saves).
public final class SampleSiteServer: Sendable {
    private let channel: any Channel
    private let served: NIOLockedValueBox<Int>

    /// The port it listens on.
    public let port: Int
    /// Whether it speaks HTTPS.
    public let secure: Bool

    /// Starts serving on `host`:`port` (0 picks a free port). Every file is sent with
    /// `Cache-Control: cacheControl` (`public, max-age=3600` unless told otherwise; `no-cache` is
    /// what most sites send for their HTML). With `tls`, it speaks HTTPS.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, latency: Duration = .zero,
        cacheControl: String = "public, max-age=3600",
        tls: NIOSSLContext? = nil
    ) async throws -> SampleSiteServer {
        let served = NIOLockedValueBox(0)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let tls { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(
                        SiteHandler(latency: latency, cacheControl: cacheControl, served: served))
                }
            }
            .bind(host: host, port: port)
            .get()
        return SampleSiteServer(channel: channel, served: served, secure: tls != nil)
    }

    private init(channel: any Channel, served: NIOLockedValueBox<Int>, secure: Bool) {
        self.channel = channel
        self.secure = secure
        self.port = channel.localAddress?.port ?? 0
        self.served = served
    }

    /// The site's root URL: `http://127.0.0.1:PORT` (`https` with TLS).
    public var baseURL: URL { URL(string: "\(secure ? "https" : "http")://127.0.0.1:\(port)")! }

    /// How many requests it has answered.
    public var requestsServed: Int { served.withLockedValue { $0 } }

    /// Stops listening. Open connections are closed by their clients or when the process ends.
    public func stop() async throws {
        try await channel.close()
    }

    /// Waits until the server channel closes.
    public func waitUntilClosed() async throws {
        try await channel.closeFuture.get()
    }
}

private final class SiteHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let latency: Duration
    private let cacheControl: String
    private let served: NIOLockedValueBox<Int>
    private var head: HTTPRequestHead?

    init(latency: Duration, cacheControl: String, served: NIOLockedValueBox<Int>) {
        self.latency = latency
        self.cacheControl = cacheControl
        self.served = served
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            head = request
        case .body:
            break
        case .end:
            guard let request = head else { return }
            head = nil
            served.withLockedValue { $0 += 1 }
            let (responseHead, body) = Self.response(to: request, cacheControl: cacheControl)
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            let send: @Sendable () -> Void = {
                let (handler, context) = bound.value
                context.write(handler.wrapOutboundOut(.head(responseHead)), promise: nil)
                if let body, request.method != .HEAD {
                    context.write(handler.wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                }
                context.writeAndFlush(handler.wrapOutboundOut(.end(nil)), promise: nil)
            }
            if latency > .zero {
                let (seconds, attoseconds) = latency.components
                context.eventLoop.scheduleTask(
                    in: .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000), send)
            } else {
                send()
            }
        }
    }

    static func response(to request: HTTPRequestHead, cacheControl: String) -> (HTTPResponseHead, ByteBuffer?) {
        let path = String(request.uri.split(separator: "?", maxSplits: 1).first ?? "")
        var headers = HTTPHeaders()
        headers.add(name: "Server", value: "webcache-sample-site")
        guard request.method == .GET || request.method == .HEAD,
            let file = SampleSite.files[path == "/" ? "/index.html" : path]
        else {
            headers.add(name: "Content-Length", value: "0")
            headers.add(name: "Cache-Control", value: "no-store")
            return (HTTPResponseHead(version: request.version, status: .notFound, headers: headers), nil)
        }
        let tag =
            "\"\(String(file.body.count, radix: 16))-\(String(UInt32(truncatingIfNeeded: file.body.hashValueStable), radix: 16))\""
        headers.add(name: "Cache-Control", value: cacheControl)
        headers.add(name: "ETag", value: tag)
        if request.headers["If-None-Match"].contains(where: {
            $0.split(separator: ",").map { $0.filter { $0 != " " } }.contains(Substring(tag))
        }) {
            return (HTTPResponseHead(version: request.version, status: .notModified, headers: headers), nil)
        }
        headers.add(name: "Content-Type", value: file.contentType)
        headers.add(name: "Content-Length", value: String(file.body.count))
        return (HTTPResponseHead(version: request.version, status: .ok, headers: headers), ByteBuffer(bytes: file.body))
    }
}

extension Data {
    /// FNV-1a over the bytes: the same in every process (unlike `hashValue`).
    fileprivate var hashValueStable: UInt64 {
        reduce(0xcbf2_9ce4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    }
}
