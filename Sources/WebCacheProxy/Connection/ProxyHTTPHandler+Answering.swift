import HTTPWire
import NIOCore
import WebCache

/// Answering a request: at once on the event loop when nothing needs waiting for (refusals, the
/// proxy's own paths, answers from the store), on a task otherwise; then the requests that
/// waited behind it.
extension ProxyHTTPHandler {
    /// Answers at once what needs no waiting (refusals, the proxy's own paths, answers from the
    /// store); runs everything else through the engine on a task and writes the answer. A
    /// `bodyStream` is the request's body still arriving (``startUpload(context:head:)``).
    func respond(context: ChannelHandlerContext, head: RequestHead, bodyStream: RequestBodyStream? = nil) {
        let requestBody = body
        body = ByteBuffer()
        // After a refused head the rest of the stream cannot be trusted to be framed: close.
        let persistence = ConnectionPersistence(
            for: head, closing: [400, 413, 503].contains(refusal?.head.status.code ?? 0) || state.isQuiescing)
        // The same head gets the same answer, unless refused or closing (then it differs).
        let mayRepeat =
            proxy.configuration.replaysAnswers && refusal == nil && !state.isQuiescing && requestBody.readableBytes == 0
            && bodyStream == nil
        let identity = mayRepeat ? RequestIdentity(head: head, tunnel: tunnel?.authority) : nil
        if let identity,
            let answer = proxy.replayedAnswer(
                to: identity, from: answers, persistence: persistence, allocator: context.channel.allocator)
        {
            finish(answer, context: context, persistence: persistence)
            return
        }
        if clientOnLoopback == nil {
            clientOnLoopback = context.channel.remoteAddress?.ipAddress.map(NetworkExposure.isLoopback) ?? false
        }
        let routing =
            refusal.map { ProxyRouting.answered($0) }
            ?? proxy.route(head, body: requestBody, fromLoopback: clientOnLoopback ?? false, tunnel: tunnel)
        let allocator = context.channel.allocator
        var trip: HTTPCache.OriginTrip?
        switch routing {
        case .answered(let response) where response.body.isWhole:
            finish(
                proxy.encode(response, allocator: allocator, persistence: persistence, method: head.method),
                context: context, persistence: persistence)
            return
        case .cache(let request, let url, nil) where request.method == .get || request.method == .head:
            if let stored = proxy.storedAnswer(
                for: request, url: url, clientHead: head, persistence: persistence, allocator: allocator,
                trip: &trip)
            {
                if let identity {
                    proxy.remember(
                        stored.answer, terms: stored.terms, status: stored.status, rangeFields: stored.rangeFields,
                        for: identity, in: answers)
                }
                let answer = stored.answer
                finish(answer, context: context, persistence: persistence)
                return
            }
        default:
            break
        }
        state.startAnswering()
        let decidedTrip = trip
        let proxy = self.proxy
        let channel = context.channel
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let interim = InterimForwarding.accepts(head.version) ? InterimForwarding(channel: channel) : nil
        answering = context.eventLoop.startTask {
            let response: ProxyResponse
            switch routing {
            case .answered(let answer): response = answer
            case .cache(let request, let url, let body):
                response = await proxy.respond(
                    to: request, url: url, body: body, bodyStream: bodyStream, interim: interim?.handler,
                    trip: decidedTrip)
                interim?.close()
            }
            let framing = proxy.framing(of: response, method: head.method, version: head.version)
            // A body that runs until the close ends the connection.
            let persistence = framing == .untilClose ? .close : persistence
            let unended = await proxy.write(
                response, framing: framing, to: channel, persistence: persistence, method: head.method)
            if let previous = await ProxyHTTPHandler.swapUnended(unended, of: loopBound) {
                await previous.ended()
            }
            channel.eventLoop.execute {
                let (handler, context) = loopBound.value
                handler.answered(context: context, keepAlive: persistence.keepsAlive)
            }
        }
    }

    /// Keeps `unended` as the connection's body still ending and returns the one kept before, on
    /// the connection's loop.
    nonisolated(nonsending) private static func swapUnended(
        _ unended: UnendedBody?, of loopBound: NIOLoopBound<(ProxyHTTPHandler, ChannelHandlerContext)>
    ) async -> UnendedBody? {
        let loop = loopBound.eventLoop
        if loop.inEventLoop { return loopBound.value.0.swapUnended(unended) }
        return try? await loop.submit { loopBound.value.0.swapUnended(unended) }.get()
    }

    private func swapUnended(_ new: UnendedBody?) -> UnendedBody? {
        defer { unended = new }
        return unended
    }

    /// Writes a whole answer on the event loop, without a task. The flush waits for the end of
    /// the loop's tick (``EndOfTickFlushes``).
    private func finish(_ answer: EncodedAnswer, context: ChannelHandlerContext, persistence: ConnectionPersistence) {
        let channel = context.channel
        // Only a connection that closes after the answer waits for it to be written.
        let written = persistence.keepsAlive ? nil : context.eventLoop.makePromise(of: Void.self)
        // From this handler on, as the pipeline would bring the writes to it.
        CachingProxy.send(answer, on: context.eventLoop, written: written) { data, promise in
            write(context: context, data: NIOAny(data), promise: promise)
        }
        if endOfTick == nil { endOfTick = proxy.endOfTickFlushes.batch(for: context.eventLoop) }
        endOfTick?.value.flush(channel)
        state.answerLeftForFlush()
        guard let written else {
            answered(context: context, keepAlive: true)
            return
        }
        written.futureResult.whenComplete { _ in channel.close(promise: nil) }
    }

    /// After an answer: closes the connection, or goes on with requests that arrived meanwhile
    /// and lets reading resume; once the client has half-closed, or sent bytes that are not
    /// HTTP, closes after the last answer (with a 400 for the bad bytes).
    func answered(context: ChannelHandlerContext, keepAlive: Bool) {
        releaseBody()
        answering = nil
        guard state.answerWritten(keepAlive: keepAlive) else {
            context.close(promise: nil)
            return
        }
        // Answered on the spot while the loop below runs: the loop goes on, and the steps after
        // it are taken once, by the outermost call.
        guard !handlingWaitingParts else { return }
        handlingWaitingParts = true
        while let part = state.nextWaitingPart() {
            handle(part, context: context)
        }
        // A `CONNECT` or an upgrade answered without becoming a tunnel (refused, or an upgrade
        // passed on as a plain request): what came after it is HTTP after all.
        if parser.isPaused && !handedOver && state.phase == .reading {
            parser.resume()
            parseRequests(context: context)
        }
        handlingWaitingParts = false
        if state.headArrivedWhileAnswering(requestInProgress: head != nil, headDeadlineRunning: headDeadline != nil) {
            startHeadDeadline(context: context)
        }
        switch state.nextStep() {
        case .none: break
        case .read:
            if state.readRequested(writable: context.channel.isWritable) { context.read() }
        case .closeAfterWrites: closeAfterWrites(context: context)
        case .refuseMalformed(let status, let reason): refuseMalformed(status: status, reason: reason, context: context)
        }
    }

    /// Closes once everything written so far is on its way.
    func closeAfterWrites(context: ChannelHandlerContext) {
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer())).whenComplete { _ in channel.close(promise: nil) }
    }
}
