import HTTPWire
import NIOCore
import NIOHTTP1

/// What never becomes a request: a head still arriving after its time limit (408), and bytes the
/// parser cannot take (400, 431 for a head over the limit, 501 for an unknown method, 505 for
/// another HTTP version) — answered after the requests before them, then the connection closes.
extension ProxyHTTPHandler {
    func channelReadComplete(context: ChannelHandlerContext) {
        // Bytes came and no part of a request: a head is arriving. It has a time limit from now
        // (the idle timeout restarts with every byte, so it cannot stop a trickle).
        if state.readComplete(requestInProgress: head != nil, headDeadlineRunning: headDeadline != nil) {
            startHeadDeadline(context: context)
        }
        context.fireChannelReadComplete()
    }

    /// Gives the head that is arriving ``ProxyConfiguration/requestHeadTimeout`` from now.
    func startHeadDeadline(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        headDeadline = context.eventLoop.scheduleTask(
            in: .nanoseconds(proxy.configuration.requestHeadTimeout.nanoseconds)
        ) {
            let (handler, context) = loopBound.value
            handler.headDeadline = nil
            handler.headTimedOut(context: context)
        }
    }

    private func headTimedOut(context: ChannelHandlerContext) {
        guard state.headTimedOut(requestInProgress: head != nil) else { return }
        proxy.metrics.countResponse(status: 408)
        let refusal = "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: refusal))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        proxy.logger.debug("connection error: \(error)")
        context.close(promise: nil)
    }

    /// Refuses bytes the parser could not take: with 501 for a method the proxy does not know
    /// (RFC 9110 §9.1), 505 for an HTTP version other than 1.0 and 1.1 (§15.6.6), 431 for a
    /// head over the limit, 400 for the rest — after the answers to the requests before them
    /// (RFC 9112 §9.3.2 keeps the order; ``answered(context:keepAlive:)`` then sends it).
    func refuse(_ error: HTTPParseError, context: ChannelHandlerContext) {
        proxy.logger.debug("refusing what a client sent: \(error)")
        failUpload("the request body was malformed: \(error)")
        let reason = HTTPResponseStatus(statusCode: error.status).reasonPhrase
        if case .refuseMalformed(let status, let reason)? = state.bytesNotHTTP(status: error.status, reason: reason) {
            refuseMalformed(status: status, reason: reason, context: context)
        }
    }

    func refuseMalformed(status: Int, reason: String, context: ChannelHandlerContext) {
        // A head cut short by the connection's own close is not answered.
        guard context.channel.isActive else { return }
        let refusal = "HTTP/1.1 \(status) \(reason)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        proxy.metrics.countResponse(status: status)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: refusal))).whenComplete { _ in
            channel.close(promise: nil)
        }
    }
}
