import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// A real HTTP/1.1 origin server on 127.0.0.1 for end-to-end tests: routes by path, records
/// every request, and can answer late, fail, or hang up. Stop it with ``stop()``.
public final class TestOrigin: @unchecked Sendable {
    /// A request as the origin received it.
    public struct Request: Sendable {
        /// The method, e.g. `GET`.
        public var method: String
        /// The path with its query.
        public var target: String
        /// The header lines in order.
        public var headers: [(String, String)]
        /// The body.
        public var body: Data

        /// The first value of a header, compared without case.
        public func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }

        /// The path without the query.
        public var path: String { String(target.split(separator: "?", maxSplits: 1).first ?? "") }
    }

    /// What a route answers.
    public struct Response: Sendable {
        /// The status code.
        public var status: Int
        /// Header lines.
        public var headers: [(String, String)]
        /// The body.
        public var body: Data
        /// Wait this long before answering.
        public var delay: Duration
        /// Close the connection instead of answering.
        public var hangUp: Bool
        /// Send this many body bytes, then wait ``pause`` before sending the rest.
        public var pauseAfter: Int?
        /// How long to wait half-way through the body.
        public var pause: Duration = .zero
        /// How many times ``pauseAfter`` bytes go and then ``pause`` is waited (a body that
        /// trickles in pieces).
        public var pauses = 1
        /// With ``pauseAfter``: instead of waiting ``pause``, wait until this gate opens, so that
        /// a test decides when the rest of the body goes (no sleeping, no wall-clock bounds).
        public var pauseUntil: OriginGate?
        /// Send the body chunked, without `Content-Length`.
        public var chunked = false
        /// Send this many body bytes (of a `Content-Length` for the whole), then close: a
        /// response cut short.
        public var cutAfter: Int?
        /// Interim responses (`103 Early Hints`…) sent before this one, with their fields.
        public var interim: [(status: Int, headers: [(String, String)])] = []

        /// Creates a response.
        public init(
            status: Int = 200, headers: [(String, String)] = [], body: Data = Data(), delay: Duration = .zero,
            hangUp: Bool = false
        ) {
            self.status = status
            self.headers = headers
            self.body = body
            self.delay = delay
            self.hangUp = hangUp
        }

        /// A text response.
        public static func text(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> Response {
            Response(status: status, headers: [("Content-Type", "text/plain")] + headers, body: Data(text.utf8))
        }
    }

    /// A route handler.
    public typealias Handler = @Sendable (Request) -> Response

    private let lock = NSLock()
    private var routes: [String: Handler] = [:]
    private var received: [Request] = []
    private let channels = ServedChannels()

    /// The port, once started.
    public private(set) var port = 0

    /// The port held once stopped (``HeldPort``).
    private var heldPort: HeldPort?

    /// TLS, for an `https://` origin.
    public let tls: TestTLS?

    /// Creates a stopped origin, speaking HTTPS with `tls`.
    public init(tls: TestTLS? = nil) {
        self.tls = tls
    }

    /// Starts listening on 127.0.0.1 on a free port.
    /// Runs `body` with a started origin (HTTPS with `tls`), and stops it when `body` is done
    /// or throws: the teardown is awaited, never left to a task.
    public static func with<Result: Sendable>(
        tls: TestTLS? = nil, _ body: (TestOrigin) async throws -> Result
    ) async throws -> Result {
        let origin = TestOrigin(tls: tls)
        try await origin.start()
        do {
            let result = try await body(origin)
            try await origin.stop(holdingPort: false)
            return result
        } catch {
            try? await origin.stop(holdingPort: false)
            throw error
        }
    }

    public func start() async throws {
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            // So that a stopped origin can hold its port (HeldPort) before it stops listening.
            .serverChannelOption(.socketOption(NIOBSDSocket.Option(rawValue: SO_REUSEPORT)), value: 1)
            .childChannelInitializer { [self] channel in
                channels.track(channel)
                return channel.eventLoop.makeCompletedFuture {
                    if let tls {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls.context))
                    }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(OriginHandler(origin: self))
                }
            }
        let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
        channels.listen(on: channel)
        lock.withLock { self.port = channel.localAddress?.port ?? 0 }
    }

    /// Connections accepted so far.
    public var connectionsAccepted: Int { channels.accepted }

    /// Connections open now (accepted and not closed).
    public var connectionsOpen: Int { channels.open }

    /// Closes the open connections and goes on listening.
    public func dropConnections() async {
        await channels.closeConnections()
    }

    /// Stops listening and drops every open connection, as an origin that goes away would: its
    /// port refuses connections from then on, and no other server takes it (``HeldPort``) —
    /// until the end of the test lets it go (`holdingPort: false`).
    public func stop(holdingPort: Bool = true) async throws {
        let held = holdingPort && port > 0 ? HeldPort(port) : nil
        lock.withLock { heldPort = holdingPort ? heldPort ?? held : nil }
        try await channels.closeAll()
    }

    /// The absolute URL of `path` on this origin.
    public func url(_ path: String) -> URL {
        URL(string: "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)\(path)")!
    }

    /// Answers requests to `path` (without query) with `handler`.
    public func route(_ path: String, _ handler: @escaping Handler) {
        lock.withLock { routes[path] = handler }
    }

    /// The requests received for `path` (all when `nil`).
    public func requests(to path: String? = nil) -> [Request] {
        lock.withLock { received.filter { path == nil || $0.path == path } }
    }

    /// How many requests reached `path`.
    public func count(_ path: String) -> Int { requests(to: path).count }

    func handle(_ request: Request) -> Response {
        let handler = lock.withLock { () -> Handler? in
            received.append(request)
            return routes[request.path]
        }
        return handler?(request) ?? .text("no route for \(request.path)", status: 404)
    }
}

private final class OriginHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let origin: TestOrigin
    private var head: HTTPRequestHead?
    private var body = Data()

    init(origin: TestOrigin) { self.origin = origin }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = Data()
        case .body(let buffer):
            body.append(contentsOf: buffer.readableBytesView)
        case .end:
            guard let head else { return }
            let request = TestOrigin.Request(
                method: head.method.rawValue, target: head.uri, headers: head.headers.map { ($0.name, $0.value) },
                body: body)
            let response = origin.handle(request)
            let keepAlive = head.isKeepAlive
            if response.delay > .zero {
                let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                let nanoseconds =
                    response.delay.components.seconds * 1_000_000_000 + response.delay.components.attoseconds
                    / 1_000_000_000
                context.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
                    let (handler, context) = bound.value
                    handler.write(response, keepAlive: keepAlive, context: context)
                }
            } else {
                write(response, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func write(_ response: TestOrigin.Response, keepAlive: Bool, context: ChannelHandlerContext) {
        guard !response.hangUp else {
            context.close(promise: nil)
            return
        }
        var headers = HTTPHeaders(response.headers)
        if !response.chunked && !headers.contains(name: "Content-Length") {
            headers.add(name: "Content-Length", value: String(response.body.count))
        }
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: response.status), headers: headers)
        for interim in response.interim {
            let status = HTTPResponseStatus(statusCode: interim.status)
            context.writeAndFlush(
                wrapOutboundOut(
                    .head(HTTPResponseHead(version: .http1_1, status: status, headers: HTTPHeaders(interim.headers)))),
                promise: nil)
        }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let cutAfter = response.cutAfter, cutAfter < response.body.count {
            let channel = context.channel
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body.prefix(cutAfter)))))
            )
            .whenComplete { _ in channel.close(promise: nil) }
            return
        }
        sendBody(response, keepAlive: keepAlive, context: context)
    }

    /// The body, with its pauses.
    private func sendBody(_ response: TestOrigin.Response, keepAlive: Bool, context: ChannelHandlerContext) {
        if let pauseAfter = response.pauseAfter, pauseAfter < response.body.count, response.pauses > 0 {
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body.prefix(pauseAfter))))), promise: nil)
            var remainder = response
            remainder.body = response.body.dropFirst(pauseAfter)
            remainder.pauses -= 1
            let rest = remainder
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            if let gate = response.pauseUntil {
                let loop = context.eventLoop
                gate.arrive {
                    loop.execute {
                        let (handler, context) = bound.value
                        handler.writeBody(rest, keepAlive: keepAlive, context: context)
                    }
                }
                return
            }
            let nanoseconds =
                response.pause.components.seconds * 1_000_000_000 + response.pause.components.attoseconds
                / 1_000_000_000
            context.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds)) {
                let (handler, context) = bound.value
                handler.sendBody(rest, keepAlive: keepAlive, context: context)
            }
            return
        }
        writeBody(response, keepAlive: keepAlive, context: context)
    }

    private func writeBody(_ response: TestOrigin.Response, keepAlive: Bool, context: ChannelHandlerContext) {
        if !response.body.isEmpty {
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        }
        if keepAlive {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        } else {
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
