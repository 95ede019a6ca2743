import NIOCore

/// Tells the handlers behind it (`IdleStateHandler.IdleStateEvent.all`) when a connection has
/// neither read nor sent anything for `timeout`, as SwiftNIO's `IdleStateHandler(allTimeout:)`
/// does, for less per request: it notes the time of each completed read and of each flush, where
/// that handler attaches a promise and a callback to every write to note when it completed.
///
/// Sending counts when it is flushed rather than when the socket took it. A client that stops
/// reading is still found: after the last flush nothing more is sent until the writes before
/// it complete (the proxy writes an answer, or a streamed body's next part, only then), so the
/// connection goes quiet and is let go one timeout after that flush. Like `IdleStateHandler`,
/// it fires again after each further `timeout` that stays quiet. Used on its channel's loop
/// only, so its properties skip the runtime's exclusivity check (see ``ProxyHTTPHandler``).
final class IdleConnectionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny

    private let timeout: TimeAmount
    @exclusivity(unchecked) private var lastActivity = NIODeadline.uptimeNanoseconds(0)
    /// A read has delivered bytes and its `channelReadComplete` has not come yet.
    @exclusivity(unchecked) private var reading = false
    @exclusivity(unchecked) private var check: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelActive(context: ChannelHandlerContext) {
        if check == nil { start(context: context) }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        reading = true
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if reading {
            reading = false
            lastActivity = context.eventLoop.now
        }
        context.fireChannelReadComplete()
    }

    func flush(context: ChannelHandlerContext) {
        lastActivity = context.eventLoop.now
        context.flush()
    }

    private func start(context: ChannelHandlerContext) {
        lastActivity = context.eventLoop.now
        schedule(at: lastActivity + timeout, context: context)
    }

    private func stop() {
        check?.cancel()
        check = nil
    }

    private func schedule(at deadline: NIODeadline, context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        check = context.eventLoop.scheduleTask(deadline: deadline) {
            let (handler, context) = loopBound.value
            handler.checked(context: context)
        }
    }

    private func checked(context: ChannelHandlerContext) {
        guard check != nil, context.channel.isActive else { return }
        let now = context.eventLoop.now
        let quietUntil = lastActivity + timeout
        if reading || now < quietUntil {
            schedule(at: reading ? now + timeout : quietUntil, context: context)
            return
        }
        schedule(at: now + timeout, context: context)
        context.fireUserInboundEventTriggered(IdleStateHandler.IdleStateEvent.all)
    }
}
