import HTTPWire
import NIOCore
import NIOHTTP1
import NIOSSL
import WebCache
import WebCacheNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One client connection speaking HTTP/1.1: parses the bytes the client sends into requests
/// (``RequestParser``, without SwiftNIO's HTTP decoder or a head of `String`s), answers what the
/// store can answer on the spot, hands the rest to the engine on a task, and writes the answers
/// — encoded here (`ByteBuffer.writeResponseHead`), head and whole body in one buffer —
/// streaming bodies that are still arriving. A request seen before gets the encoded answer sent
/// then, while the engine confirms it stands (``ReplayCache``). A `CONNECT` turns the connection into a
/// tunnel, or — for a host the proxy intercepts HTTPS for — a TLS connection of its own whose
/// requests are served by another such handler (``InterceptedTunnel``).
///
/// One request is answered at a time, in order: requests a client pipelines while an answer is
/// on its way wait, and reading stops once one waits, until the answer is written. Malformed
/// requests get a 400 and the connection closes; on shutdown (`ChannelShouldQuiesceEvent`) the
/// connection closes once the answer in flight is written. Those decisions are made by a
/// ``ConnectionState`` value; this class carries them out and does the HTTP.
///
/// `CONNECT`, interception and upgrades are in `ProxyHTTPHandler+Tunnels.swift`, heads that do
/// not arrive in time and bytes that are not HTTP in `ProxyHTTPHandler+Malformed.swift`; the
/// state they share with this file is module-internal for that reason only.
///
/// The stored properties are `@exclusivity(unchecked)`: the handler is used on its channel's
/// event loop only, where the runtime's check of every access to a class property (two calls
/// into the runtime and a thread-local lookup each) only repeats what the compiler checks.
final class ProxyHTTPHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let proxy: CachingProxy
    /// What the client has sent, as requests; what it sent after a `CONNECT` goes to the tunnel.
    @exclusivity(unchecked) var parser: RequestParser
    /// The request whose head has arrived and whose end has not.
    @exclusivity(unchecked) var head: RequestHead?
    @exclusivity(unchecked) var body = ByteBuffer()
    /// The bytes of the proxy's request-body budget this request holds (``RequestBodyBudget``).
    @exclusivity(unchecked) private var bodyReservation = 0
    /// Where the body of the request in progress goes: held whole, or streamed to the origin.
    @exclusivity(unchecked) var upload = Upload.none
    /// The bytes of the streamed body that have come.
    @exclusivity(unchecked) var uploaded = 0
    @exclusivity(unchecked) var refusal: ProxyResponse?
    /// What the connection decides: see ``ConnectionState``.
    @exclusivity(unchecked) var state = ConnectionState()
    /// Whether the client connects from this machine (worked out once per connection).
    @exclusivity(unchecked) var clientOnLoopback: Bool?
    /// Ends a request head that is still arriving after ``ProxyConfiguration/requestHeadTimeout``.
    @exclusivity(unchecked) var headDeadline: Scheduled<Void>?

    /// Inside an intercepted tunnel: its destination, which every request goes to.
    let tunnel: InterceptedTunnel?
    /// The answers replayed on this connection: plain and tunnelled requests are kept apart.
    let answers: ReplayCache
    /// The task answering the request in progress, when it is answered on one: cancelled when
    /// the client goes, so that an answer waiting for the origin's next bytes stops waiting (and
    /// a body only its client would read is given up, its origin connection closed).
    @exclusivity(unchecked) var answering: Task<Void, Never>?
    /// The body of the last answer on a task, when the answer was over before its stream ended:
    /// the next answer on a task waits for it before the connection goes on (``UnendedBody``).
    @exclusivity(unchecked) var unended: UnendedBody?
    /// Where whole answers on this connection's loop wait to be flushed at the end of its tick.
    @exclusivity(unchecked) var endOfTick: NIOLoopBound<EndOfTickFlushes>?
    /// Whether ``answered(context:keepAlive:)`` is going through the requests that waited: an
    /// answer written on the spot meanwhile leaves the next one to that loop instead of starting
    /// its own, so that a burst of pipelined requests answered from the store is a loop, not a
    /// recursion as deep as the burst (600 requests behind a miss overflowed a debug build's
    /// stack).
    @exclusivity(unchecked) var handlingWaitingParts = false
    /// The connection was handed to a tunnel: this handler is on its way out.
    @exclusivity(unchecked) var handedOver = false

    init(proxy: CachingProxy, tunnel: InterceptedTunnel? = nil) {
        self.proxy = proxy
        self.parser = RequestParser(limits: .init(headSize: proxy.configuration.maximumHeaderSize))
        self.tunnel = tunnel
        self.answers = tunnel == nil ? proxy.answers : proxy.tunnelAnswers
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        parser.append(unwrapInboundIn(data))
        parseRequests(context: context)
    }

    /// Handles the parts of requests that have come, in order, until the parser needs more
    /// bytes (or pauses for a tunnel, or the connection is handed over); refuses bytes that
    /// are not a request.
    func parseRequests(context: ChannelHandlerContext) {
        do {
            while !handedOver, let part = try parser.next() {
                if case .head = part {
                    headDeadline?.cancel()
                    headDeadline = nil
                }
                if let now = state.receive(part) {
                    handle(now, context: context)
                }
            }
        } catch let error as HTTPParseError {
            refuse(error, context: context)
        } catch {
            context.fireErrorCaught(error)
        }
    }

    func handle(_ part: RequestParser.Part, context: ChannelHandlerContext) {
        switch part {
        case .head(let requestHead):
            head = requestHead
            // A new empty buffer, not `clear()`: clearing the shared empty one allocates.
            body = ByteBuffer()
            refusal = nil
            let streamed = streamsBodyFromHead(requestHead)
            if let problem = RequestHeadChecks.hostProblem(requestHead) {
                refusal = .error(400, problem)
            } else if let problem = tunnel?.hostProblem(requestHead) {
                refusal = .error(421, problem)
            } else if case .length(let length) = requestHead.framing,
                length > proxy.configuration.maximumRequestBodySize
            {
                refusal = .error(
                    413,
                    "the request body is \(length) bytes; the limit is \(proxy.configuration.maximumRequestBodySize)")
            } else if streamed {
                // Sent to the origin as it arrives, from now: nothing to reserve.
            } else if case .length(let length) = requestHead.framing, length > proxy.requestBodies.limit {
                refusal = .error(
                    413,
                    "the request body is \(length) bytes; a body held whole (of a GET or HEAD) may have at most \(proxy.requestBodies.limit)"
                )
            } else if case .length(let length) = requestHead.framing, !reserveBody(length) {
                refusal = bodiesRefusal(needing: length)
            } else if requestHead.expectsContinue {
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 100 Continue\r\n\r\n")), promise: nil)
            }
            if refusal != nil && requestHead.expectsContinue {
                // The client waits for a 100 before it sends the body: the refusal goes now, in its
                // place (RFC 9110 §10.1.1), and the connection closes after it.
                head = nil
                respond(context: context, head: requestHead)
            } else if refusal == nil && streamed {
                startUpload(context: context, head: requestHead)
            }
        case .body(var chunk):
            guard case .none = upload else { return upload(chunk) }
            guard refusal == nil else { return }
            let size = body.readableBytes + chunk.readableBytes
            if let requestHead = head, streamsBody(of: requestHead, size: size),
                size <= proxy.configuration.maximumRequestBodySize
            {
                // Large enough to go to the origin as it arrives, from now.
                body.writeBuffer(&chunk)
                startUpload(context: context, head: requestHead)
                return
            }
            if size > proxy.configuration.maximumRequestBodySize {
                refusal = .error(
                    413, "the request body is larger than \(proxy.configuration.maximumRequestBodySize) bytes")
            } else if size > bodyReservation && !reserveBody(size - bodyReservation) {
                refusal = bodiesRefusal(needing: size - bodyReservation)
            }
            if refusal == nil {
                body.writeBuffer(&chunk)
            } else {
                body = ByteBuffer()
                releaseBody()
            }
        case .end:
            guard case .none = upload else {
                // The answer is on its way already.
                finishUpload()
                head = nil
                return
            }
            guard let requestHead = head else { return }
            head = nil
            if requestHead.method == .CONNECT && refusal == nil && tunnel == nil {
                openTunnel(context: context, head: requestHead)
            } else if tunnel != nil && refusal == nil && requestHead.isWebSocketUpgrade {
                spliceUpgrade(context: context, head: requestHead)
            } else {
                respond(context: context, head: requestHead)
            }
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard state.countsWrites else {
            context.write(data, promise: promise)
            return
        }
        state.writeQueued()
        let written = promise ?? context.eventLoop.makePromise()
        let loopBound = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenComplete { _ in loopBound.value.state.writeDone() }
        context.write(data, promise: written)
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.closed()
        headDeadline?.cancel()
        headDeadline = nil
        releaseBody()
        failUpload("the client closed its connection before the end of the request body")
        answering?.cancel()
        answering = nil
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        headDeadline?.cancel()
        headDeadline = nil
        releaseBody()
    }

    /// Takes `bytes` more of the proxy's request-body budget for this request; false when the
    /// budget has fewer left.
    private func reserveBody(_ bytes: Int) -> Bool {
        guard proxy.requestBodies.reserve(bytes) else { return false }
        bodyReservation += bytes
        return true
    }

    /// Gives back the request-body budget this request holds: once it is answered, refused, or
    /// the connection is gone.
    func releaseBody() {
        proxy.requestBodies.release(bodyReservation)
        bodyReservation = 0
    }

    /// The answer to a request whose body the proxy has no room for now.
    private func bodiesRefusal(needing bytes: Int) -> ProxyResponse {
        var refusal = ProxyResponse.error(
            503,
            "the proxy holds \(proxy.requestBodies.bytesHeld) bytes of request bodies and cannot take \(bytes) more (the limit is \(proxy.requestBodies.limit)); try again"
        )
        refusal.head.headerFields[.retryAfter] = "1"
        return refusal
    }

    func read(context: ChannelHandlerContext) {
        // After a `CONNECT` or an upgrade nothing more is read until it is known whose the
        // bytes are (a tunnel's, or HTTP's again).
        if parser.isPaused {
            state.holdRead()
            return
        }
        if state.flushesBeforeReading(writable: context.channel.isWritable) { context.flush() }
        if state.readRequested(writable: context.channel.isWritable) { context.read() }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable, !parser.isPaused, state.becameWritable() { context.read() }
        context.fireChannelWritabilityChanged()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is IdleStateHandler.IdleStateEvent:
            // A write timeout too: the memory and connection of a client that stopped reading
            // are let go; the fetch that fills the store goes on.
            if state.idleTimedOut() { context.close(promise: nil) }
        case is ChannelShouldQuiesceEvent:
            if state.quiesce(requestInProgress: head != nil) { context.close(promise: nil) }
        case ChannelEvent.inputClosed:
            // A request cut short by the client's half-close is refused as bytes that are not
            // HTTP would be, after the answers before it.
            if parser.isMidRequest {
                refuse(.malformed("the client ended its side in the middle of a request"), context: context)
            }
            switch state.inputEnded() {
            case .close: context.close(promise: nil)
            case .closeAfterWrites: closeAfterWrites(context: context)
            case .none: break
            }
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }
}
