import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An origin on SwiftNIO directly, built for a proxy: HTTP/1.1 over kept-alive connections
/// pooled by endpoint (a new one made on the caller's event loop when it runs on one), the body
/// streamed as it arrives, and interim responses (`103 Early Hints`) handed to the caller's
/// `InterimResponseHandler` before the final head — which AsyncHTTPClient reads and drops.
/// Heads come without the connection's own fields (hop-by-hop ones and those `Connection` names,
/// RFC 9110 §7.6.1), which the client has used; a body that arrived with its head is said to
/// have (`OriginStream.arrivedWhole`).
///
/// HTTPS is verified against the system's roots and `trust` (never turned off), with SNI for
/// names. Errors are `OriginError`s as `OriginFetching` asks: `.unreachable`
/// when no answer came (refused, no route, a name that does not resolve, a timeout, a connection
/// closed), with `connectionFailed` when no connection could be made at all;
/// `.invalidResponse` for a certificate that does not verify, a malformed or
/// oversized response. A GET or HEAD whose kept-alive connection turns out closed by the origin
/// is sent once more on a new connection. Redirects are not followed (the cache stores each hop).
/// Call ``shutdown()`` when done.
public final class SwiftNIOOrigin: OriginFetching {
    let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let timeout: TimeAmount
    private let maximumBodySize: Int
    private let tls: NIOSSLContext?
    let pool: OriginConnectionPool
    /// The endpoints of the origins asked so far, by scheme and authority: a request to one
    /// skips parsing its URL.
    private let endpoints = NIOLockedValueBox([EndpointName: OriginEndpoint]())

    /// How many origins' endpoints are remembered: a forward proxy meets many hosts, and past
    /// this many the table starts again.
    private static let endpointsRemembered = 1024

    private struct EndpointName: Hashable {
        var scheme: String
        var authority: String
    }

    /// Creates an origin.
    /// - Parameters:
    ///   - connectTimeout: how long to wait for a connection before the origin counts as unreachable.
    ///   - timeout: how long the response head may take, and then each chunk of the body.
    ///   - maximumBodySize: the largest body accepted from the origin; a longer one fails there.
    ///     No limit by default: the engine holds at most a few hundred KiB of a body it does not
    ///     keep, reading it only as fast as its reader takes it (`OriginBodyPacing`).
    ///   - maximumIdleConnectionsPerHost: kept-alive connections kept per endpoint between requests
    ///     (for 30 s each). Below the number of requests a busy client sends at once, connections
    ///     are closed and made again all the time.
    ///   - trust: the certificate authorities HTTPS origins are verified against (the system's
    ///     roots by default).
    ///   - group: the event loops connections run on.
    public init(
        connectTimeout: Duration = .seconds(10), timeout: Duration = .seconds(60), maximumBodySize: Int = .max,
        maximumIdleConnectionsPerHost: Int = 256, trust: OriginTrust = OriginTrust(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        // The engine's tasks for a request made on an event loop stay on it (and so does this
        // client's connection for it).
        EventLoopCallerTasks.install()
        self.group = group
        self.connectTimeout = .nanoseconds(connectTimeout.nanoseconds)
        self.timeout = .nanoseconds(timeout.nanoseconds)
        self.maximumBodySize = maximumBodySize
        do {
            self.tls = try NIOSSLContext(configuration: trust.clientConfiguration())
        } catch {
            throw OriginError(.invalidRequest, "cannot set up TLS for HTTPS origins: \(error)", cause: error)
        }
        self.pool = OriginConnectionPool(
            maximumIdlePerEndpoint: maximumIdleConnectionsPerHost, idleTimeout: .seconds(30))
    }

    /// Closes the idle connections.
    public func shutdown() async throws {
        pool.closeAll()
    }

    /// Sends the request and collects the body; see `fetch(_:body:)`.
    /// The body's errors are `OriginError`s already (the exchange classifies them).
    public func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
        try await stream(request, body: body).collected()
    }

    /// Sends the request and streams the body; see `stream(_:body:)`.
    public func stream(_ request: HTTPRequest, body: Data?) async throws -> OriginStream {
        try await stream(request, body: body, interim: nil)
    }

    /// Sends the request, hands interim responses to `interim`, and streams the body; see
    /// `stream(_:body:interim:)`.
    public func stream(_ request: HTTPRequest, body: Data?, interim: InterimResponseHandler?) async throws
        -> OriginStream
    {
        let endpoint = try requiredEndpoint(of: request)
        let head = Self.requestHead(request, endpoint: endpoint, bodyLength: body?.count)
        let bytes = body.map { ByteBuffer(bytes: $0) }
        let loop = MultiThreadedEventLoopGroup.currentEventLoop
        let idempotent = Self.isIdempotent(request.method)
        if let kept = pool.take(
            endpoint, preferring: loop, idleAtMost: idempotent ? nil : Self.reuseForOtherMethodsWithin)
        {
            do {
                return try await exchange(
                    head, body: bytes, on: kept, endpoint: endpoint, request: request, interim: interim)
            } catch  where idempotent && Self.connectionDropped(error) {
                // The origin closed the kept-alive connection as the request went out (a server's
                // keep-alive timeout, often 5 s, racing the reuse): the one retry that helps, on a
                // new connection. Only an idempotent method may be sent again unasked (RFC 9110
                // §9.2.2); a POST that met a closing connection fails, as it may have been
                // acted on.
            } catch {
                throw Self.classify(error, url: request.url, receiving: false)
            }
        }
        do {
            let connection = try await connect(endpoint, on: loop ?? group.next())
            return try await exchange(
                head, body: bytes, on: connection, endpoint: endpoint, request: request, interim: interim)
        } catch {
            throw Self.classify(error, url: request.url, receiving: false)
        }
    }

    /// ``endpoint(of:)``, or an `OriginError` for a request that is not an absolute http(s) URL.
    func requiredEndpoint(of request: HTTPRequest) throws -> OriginEndpoint {
        guard let endpoint = endpoint(of: request) else {
            throw OriginError(
                .invalidRequest,
                "\(request.url?.absoluteString ?? "a request without a URL") is not an absolute http(s) URL")
        }
        return endpoint
    }

    /// Where `request` goes: known from an earlier request to the same scheme and authority, or
    /// worked out from its URL (`nil` when it is not an absolute http(s) URL).
    private func endpoint(of request: HTTPRequest) -> OriginEndpoint? {
        guard let scheme = request.scheme, let authority = request.authority else { return nil }
        let name = EndpointName(scheme: scheme, authority: authority)
        if let known = endpoints.withLockedValue({ $0[name] }) { return known }
        guard let url = request.url, let endpoint = OriginEndpoint(url) else { return nil }
        endpoints.withLockedValue { endpoints in
            if endpoints.count >= Self.endpointsRemembered { endpoints.removeAll() }
            endpoints[name] = endpoint
        }
        return endpoint
    }

    /// Runs one exchange on `connection`; returns once the final head is in.
    /// A `streamingBody` is written after the head as it arrives (``sendBody(_:on:handler:)``).
    func exchange(
        _ head: ByteBuffer, body: ByteBuffer?, streamingBody: RequestBodyStream? = nil, on connection: OriginConnection,
        endpoint: OriginEndpoint, request: HTTPRequest, interim: InterimResponseHandler?
    ) async throws -> OriginStream {
        let loop = connection.channel.eventLoop
        let headPromise = loop.makePromise(of: OriginExchangeHandler.ArrivedHead.self)
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let pool = self.pool
        let channel = connection.channel
        continuation.onTermination = { termination in
            // A reader that stops before the end leaves the connection mid-body: it is closed.
            if case .cancelled = termination { channel.closeAtOnce() }
        }
        let exchange = OriginExchangeHandler.Exchange(
            head: headPromise, body: continuation, interim: interim, maximumBodySize: maximumBodySize, timeout: timeout,
            bodyError: { error in Self.classify(error, url: request.url, receiving: true) },
            finished: { reusable in
                if reusable {
                    pool.giveBack(connection, to: endpoint)
                } else {
                    channel.close(promise: nil)
                    // A body still being sent stops: its client is read no further.
                    streamingBody?.cancel()
                }
            })
        let toHEAD = request.method == .head
        let bodyFollows = streamingBody != nil
        let start: @Sendable () -> Void = {
            connection.handler.value.start(
                head, body: body, bodyFollows: bodyFollows, toHEAD: toHEAD, exchange: exchange)
        }
        // Called from a task on the connection's loop (a miss from the proxy), the request goes
        // out now rather than after a trip through the loop's queue.
        if loop.inEventLoop { start() } else { loop.execute(start) }
        if let streamingBody {
            let handler = connection.handler
            loop.startTask {
                await Self.sendBody(streamingBody, for: request.url, on: channel, handler: handler)
            }
        }
        let arrived = try await headPromise.futureResult.get()
        return OriginStream(
            head: arrived.response, body: stream, arrivedWhole: arrived.bodyArrived,
            pacing: arrived.pacing)
    }

    /// A new connection to `endpoint`, with TLS for `https`.
    func connect(_ endpoint: OriginEndpoint, on loop: any EventLoop) async throws -> OriginConnection {
        let tls = endpoint.isSecure ? self.tls : nil
        // Kept from the initializer: a TLS handshake that fails at once empties the pipeline
        // before a lookup after `connect` could find the handler (which holds the TLS error).
        let added = NIOLockedValueBox<NIOLoopBound<OriginExchangeHandler>?>(nil)
        let channel = try await ClientBootstrap(group: loop)
            .connectTimeout(connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(
                            NIOSSLClientHandler(
                                context: tls, serverHostname: endpoint.hostIsAddress ? nil : endpoint.host))
                    }
                    let handler = OriginExchangeHandler()
                    try pipeline.addHandler(handler)
                    added.withLockedValue { $0 = NIOLoopBound(handler, eventLoop: channel.eventLoop) }
                }
            }
            .connect(host: endpoint.host, port: endpoint.port)
            .get()
        guard let handler = added.withLockedValue({ $0 }) else {
            channel.close(promise: nil)
            throw OriginExchangeHandler.Failure.closedBeforeHead
        }
        let pool = self.pool
        channel.closeFuture.whenComplete { _ in pool.forget(channel, of: endpoint) }
        return OriginConnection(channel: channel, handler: handler)
    }

    /// The request head as it goes to the origin, encoded: origin-form target, `Host` for the
    /// endpoint (whatever `Host` the request carried), `Content-Length` for a body, or
    /// `Transfer-Encoding: chunked` for a body of unknown length. HTTPTypes has made every field
    /// value safe to send (no CR, LF or NUL).
    static func requestHead(
        _ request: HTTPRequest, endpoint: OriginEndpoint, bodyLength: Int?, chunked: Bool = false
    ) -> ByteBuffer {
        let target = request.path.flatMap { $0.isEmpty ? nil : $0 } ?? "/"
        var head = ByteBufferAllocator().buffer(capacity: 256 + 64 * request.headerFields.count)
        head.writeString(request.method.rawValue)
        head.writeStaticString(" ")
        head.writeString(target)
        head.writeStaticString(" HTTP/1.1\r\nHost: ")
        head.writeString(endpoint.authority)
        head.writeStaticString("\r\n")
        for field in request.headerFields
        where field.name.canonicalName != "host" && field.name != .contentLength && field.name != .transferEncoding {
            head.writeString(field.name.rawName)
            head.writeStaticString(": ")
            head.writeString(field.value)
            head.writeStaticString("\r\n")
        }
        if chunked {
            head.writeStaticString("Transfer-Encoding: chunked\r\n")
        } else if let bodyLength {
            head.writeStaticString("Content-Length: ")
            head.writeString(String(bodyLength))
            head.writeStaticString("\r\n")
        } else if ![HTTPRequest.Method.get, .head, .options, .trace].contains(request.method) {
            head.writeStaticString("Content-Length: 0\r\n")
        }
        head.writeStaticString("\r\n")
        return head
    }

    /// Whether a kept-alive connection was closed or reset under a request, before any answer.
    /// How long a kept-alive connection may have been idle to carry a request that cannot be
    /// sent again (a POST): well inside the keep-alive timeout of common servers (5 s for Node
    /// and Apache), so that the origin is not closing it as the request goes out.
    static let reuseForOtherMethodsWithin = TimeAmount.seconds(2)

    /// GET, HEAD, PUT, DELETE, OPTIONS and TRACE: methods whose request may be sent again
    /// after a connection failure (RFC 9110 §9.2.2).
    static func isIdempotent(_ method: HTTPRequest.Method) -> Bool {
        switch method {
        case .get, .head, .put, .delete, .options, .trace: true
        default: false
        }
    }
}
