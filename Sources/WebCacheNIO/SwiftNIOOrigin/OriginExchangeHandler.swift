import HTTPTypes
import HTTPWire
import NIOCore
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One exchange at a time on a connection to an origin: writes the request (its head encoded by
/// ``SwiftNIOOrigin/requestHead(_:endpoint:bodyLength:)``), parses what comes back
/// (``ResponseParser``, not SwiftNIO's HTTP decoder), hands interim responses to their handler,
/// completes the head, streams the body, and says at the end whether the connection may carry
/// another request.
///
/// The final head is handed over once the read it came in has been parsed, saying whether the
/// body arrived whole with it (``ArrivedHead``): a small response usually does, and the engine
/// then takes it in one go instead of starting a task to follow its body.
///
/// The body is read only as fast as the engine takes it when it follows the exchange's
/// ``OriginBodyPacing``: past ``OriginBodyPacing/pauseAbove`` bytes not taken, the connection's
/// next read is held (and the body's time limit stopped) until the pacing resumes it.
///
/// Used on its channel's event loop only: its stored properties are `@exclusivity(unchecked)`,
/// since the runtime's check of every access to them would only repeat the compiler's.
final class OriginExchangeHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    @exclusivity(unchecked) private var context: ChannelHandlerContext?
    @exclusivity(unchecked) private var exchange: Exchange?
    @exclusivity(unchecked) private var parser = ResponseParser()
    @exclusivity(unchecked) private var headReceived = false
    /// The final head, received in the read being parsed and not handed over yet.
    @exclusivity(unchecked) private var headToHandOver: HTTPResponse?
    @exclusivity(unchecked) private var received = 0
    @exclusivity(unchecked) private var keepAlive = false
    /// The time limit of the exchange: one scheduled task, which moves its own deadline on when
    /// it fires early (progress only moves `deadline`, so a chunk costs no timer of its own). It
    /// outlives the exchange: the connection's next exchange only moves `deadline` too, and a
    /// timer that fires between exchanges does nothing; so a kept-alive connection schedules
    /// about one timer per time limit, not one per exchange. Cancelled when the connection goes.
    @exclusivity(unchecked) private var timer: Scheduled<Void>?
    /// When `timer` fires.
    @exclusivity(unchecked) private var timerFiresAt = NIODeadline.distantFuture
    @exclusivity(unchecked) private var deadline = NIODeadline.distantFuture
    @exclusivity(unchecked) private var timingBody = false
    /// The last error the connection reported (a TLS handshake that failed comes to the request's
    /// write, or as an error around the close): the reason given when it closes.
    @exclusivity(unchecked) private var lastError: (any Error)?
    /// The back-pressure of the body on its way, made when the head is handed over without it
    /// (its closures hold this handler: let go when the exchange ends, however it ends).
    @exclusivity(unchecked) private var pacing: OriginBodyPacing?
    /// Tells this exchange's pacing from an earlier one's.
    @exclusivity(unchecked) private var mark: Mark?
    /// The body's reader is behind (``OriginBodyPacing``): reads are held.
    @exclusivity(unchecked) private var readingPaused = false
    /// A read was asked for while paused: it is made when reading resumes.
    @exclusivity(unchecked) private var readPending = false
    /// The request's body is still being sent (``requestBodyProgress()``,
    /// ``requestBodySent()``): a response that ends meanwhile leaves the connection unusable.
    @exclusivity(unchecked) private var sendingBody = false
    /// Undoes the response body's transfer coding, when it came in one besides chunked.
    @exclusivity(unchecked) private var decoding: TransferDecoding?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        cancelTimer()
        decoding = nil
        pacing = nil
        mark = nil
        self.context = nil
    }

    /// Sends `head` (and `body`) and reports the response to `exchange`; `toHEAD` when the
    /// request is a `HEAD` (no body follows the response's head); `bodyFollows` when the body is
    /// written after the head by its sender, which reports ``requestBodyProgress()`` and
    /// ``requestBodySent()``. On the event loop.
    func start(_ head: ByteBuffer, body: ByteBuffer?, bodyFollows: Bool = false, toHEAD: Bool, exchange: Exchange) {
        guard let context, context.channel.isActive, lastError == nil else {
            // Closed meanwhile, or failed before the request (a TLS handshake starts on connect).
            let error = lastError ?? Failure.closedBeforeHead
            exchange.head.fail(error)
            exchange.body.finish(throwing: exchange.bodyError(error))
            exchange.finished(false)
            return
        }
        self.exchange = exchange
        sendingBody = bodyFollows
        pacing = nil
        mark = nil
        stopPausing(context: context)
        headReceived = false
        headToHandOver = nil
        received = 0
        keepAlive = true
        parser.expectResponse(toHEAD: toHEAD)
        armTimer(exchange.timeout, receivingBody: false)
        let written = context.eventLoop.makePromise(of: Void.self)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        written.futureResult.whenFailure { error in
            let (handler, context) = bound.value
            handler.lastError = handler.lastError ?? error
            if !context.channel.isActive { handler.fail(error, context: context) }
        }
        if let body, body.readableBytes > 0 {
            context.write(wrapOutboundOut(head), promise: nil)
            context.writeAndFlush(wrapOutboundOut(body), promise: written)
        } else {
            context.writeAndFlush(wrapOutboundOut(head), promise: written)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard exchange != nil else {
            // Bytes no request asked for: the connection cannot be trusted with another.
            context.channel.closeAtOnce()
            return
        }
        parser.append(unwrapInboundIn(data))
        do {
            while let exchange, let part = try parser.next() {
                try handle(part, of: exchange, context: context)
            }
        } catch {
            fail(error, context: context)
            return
        }
        // The body goes on arriving in later reads.
        if let exchange { handOverHead(of: exchange, bodyArrived: false) }
    }

    /// Completes the exchange's head promise with the head received in this read, if any.
    private func handOverHead(of exchange: Exchange, bodyArrived: Bool) {
        guard let head = headToHandOver else { return }
        headToHandOver = nil
        exchange.head.succeed(
            ArrivedHead(response: head, bodyArrived: bodyArrived, pacing: bodyArrived ? nil : makePacing()))
    }

    /// The pacing of the body that follows the head handed over now: its resume and abandon
    /// come back to this exchange on the event loop (and do nothing once it is over).
    private func makePacing() -> OriginBodyPacing? {
        guard let context else { return nil }
        let mark = Mark()
        let loop = context.eventLoop
        let bound = NIOLoopBound(self, eventLoop: loop)
        let pacing = OriginBodyPacing(
            resume: { loop.execute { bound.value.resumeReading(mark) } },
            abandon: { loop.execute { bound.value.abandon(mark) } })
        self.mark = mark
        self.pacing = pacing
        return pacing
    }

    /// Takes the next part of the response; throws when the response cannot be used (a
    /// transfer coding that cannot be undone, or a body not valid in it).
    private func handle(_ part: ResponseParser.Part, of exchange: Exchange, context: ChannelHandlerContext) throws {
        switch part {
        case .head(let head) where head.isInterim:
            guard head.status != 101 else {
                fail(Failure.switchingProtocols, context: context)
                return
            }
            exchange.interim?(Self.response(head))
        case .head(let head):
            decoding = try TransferDecoding.make(
                transferEncoding: Self.transferEncoding(of: head), limit: exchange.maximumBodySize)
            headReceived = true
            keepAlive = keepAlive && head.keepAlive
            armTimer(exchange.timeout, receivingBody: true)
            headToHandOver = Self.response(head)
        case .body(let buffer):
            let chunk =
                try decoding.map { decoding in
                    try buffer.withUnsafeReadableBytes { try decoding.decode($0) }
                } ?? buffer.bodyChunk()
            guard !chunk.isEmpty else {
                // Coded bytes that make no content yet: progress all the same.
                armTimer(exchange.timeout, receivingBody: true)
                return
            }
            received += chunk.count
            guard received <= exchange.maximumBodySize else {
                fail(Failure.tooLarge(limit: exchange.maximumBodySize), context: context)
                return
            }
            armTimer(exchange.timeout, receivingBody: true)
            // Counted before it is handed over: a reader on another event loop may take it, and
            // say so, before this one goes on (taken before produced would count it for ever).
            if pacing?.produced(chunk.count) == true { readingPaused = true }
            exchange.body.yield(chunk)
            if readingPaused { deadline = .distantFuture }  // the reader's wait, not the origin's silence
        case .end:
            try decoding?.finish()
            decoding = nil
            deadline = .distantFuture  // the timer stays for the next exchange
            self.exchange = nil
            pacing = nil
            mark = nil
            stopPausing(context: context)
            // The connection goes back to the pool before the reader learns the body is whole, so
            // that a request it sends next finds it there — unless the origin sent bytes past the
            // end of this response: they would be read as the start of the next one.
            // Nor when the origin answered before the request's body was all sent: the rest
            // of it would be read as the next request.
            exchange.finished(keepAlive && !parser.hasUnreadBytes && !sendingBody)
            exchange.body.finish()
            handOverHead(of: exchange, bodyArrived: true)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        // A body delimited by the close (no length, not chunked) is whole now.
        if let exchange, headReceived, case .end? = try? parser.connectionClosed() {
            do {
                try handle(.end, of: exchange, context: context)
            } catch {
                lastError = error
            }
        }
        if exchange != nil {
            // An error that explains the close may come right after it (TLS): give it that tick.
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.execute {
                let (handler, context) = bound.value
                guard handler.exchange != nil else { return }
                let closed =
                    handler.headReceived
                    ? Failure.closedDuringBody(received: handler.received) : Failure.closedBeforeHead
                handler.fail(handler.lastError ?? closed, context: context)
            }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        lastError = error
        fail(error, context: context)
    }

    /// Ends the exchange with `error` and closes the connection.
    private func fail(_ error: any Error, context: ChannelHandlerContext) {
        cancelTimer()
        if let exchange {
            self.exchange = nil
            if !headReceived { exchange.head.fail(error) }
            handOverHead(of: exchange, bodyArrived: false)  // a head before the failure in the same read
            exchange.body.finish(throwing: exchange.bodyError(error))
            exchange.finished(false)
        }
        pacing = nil  // its closures hold this handler (a head handed over just now made it)
        mark = nil
        context.channel.closeAtOnce()
    }

    func read(context: ChannelHandlerContext) {
        if readingPaused {
            readPending = true
        } else {
            context.read()
        }
    }

    /// Reads again after the pacing paused them: the reader of the exchange marked `mark` has
    /// caught up. On the event loop.
    func resumeReading(_ mark: Mark) {
        guard let exchange, self.mark === mark, readingPaused, let context else { return }
        armTimer(exchange.timeout, receivingBody: true)
        stopPausing(context: context)
    }

    /// Ends the exchange marked `mark`, if it is still on: nothing reads the rest of its body.
    /// On the event loop.
    func abandon(_ mark: Mark) {
        guard exchange != nil, self.mark === mark, let context else { return }
        fail(Failure.abandoned, context: context)
    }

    /// A piece of the request's body went out: the origin, which may answer only once it has
    /// the whole body, gets the time limit for its head from now. On the event loop.
    func requestBodyProgress() {
        guard let exchange, sendingBody, !headReceived else { return }
        armTimer(exchange.timeout, receivingBody: false)
    }

    /// The request's body will not be sent whole (its producer failed it, or it broke its
    /// declared length): the exchange ends with `error` and the connection closes, even while a
    /// write of the body waits on an origin that takes nothing. On the event loop.
    func requestBodyFailed(_ error: any Error) {
        guard exchange != nil, let context else { return }
        fail(error, context: context)
    }

    /// The request's body is all sent. On the event loop.
    func requestBodySent() {
        guard sendingBody else { return }
        sendingBody = false
        if let exchange, !headReceived { armTimer(exchange.timeout, receivingBody: false) }
    }

    /// Reads freely again, making the read held meanwhile.
    private func stopPausing(context: ChannelHandlerContext) {
        readingPaused = false
        if readPending {
            readPending = false
            context.read()
        }
    }

    /// Gives the head (or the next chunk of the body) `timeout` from now.
    private func armTimer(_ timeout: TimeAmount, receivingBody: Bool) {
        deadline = .now() + timeout
        timingBody = receivingBody
        if timer == nil || timerFiresAt > deadline {
            cancelTimer()
            scheduleTimer()
        }
    }

    private func scheduleTimer() {
        guard let context else { return }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timerFiresAt = deadline
        timer = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = bound.value
            handler.timer = nil
            guard handler.exchange != nil else { return }
            if NIODeadline.now() < handler.deadline {
                handler.scheduleTimer()  // something arrived meanwhile: the limit runs from then
            } else {
                handler.fail(Failure.timedOut(receivingBody: handler.timingBody), context: context)
            }
        }
    }

    private func cancelTimer() {
        timer?.cancel()
        timer = nil
    }
}
