import NIOCore

/// One end of a `CONNECT` tunnel: bytes read on this channel are written to the partner's,
/// reading pauses while the partner cannot keep up, and when one side closes (EOF included, or
/// idles out, or the proxy shuts down) both do.
///
/// Both ends live on the same event loop, so they call each other directly.
final class TunnelHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var partner: TunnelHandler?
    private var context: ChannelHandlerContext?
    private var pendingRead = false
    /// This side sent its EOF (a half-close, where the channel allows it).
    private var inputClosed = false

    /// Two joined ends: one for the client's channel, one for the destination's.
    static func pair() -> (TunnelHandler, TunnelHandler) {
        let first = TunnelHandler()
        let second = TunnelHandler()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // A client's connection served answers with room for one sent from a file; a tunnel
        // buffers for a partner that cannot keep up, so it gets SwiftNIO's smaller default back.
        try? context.channel.syncOptions?.setOption(
            .writeBufferWaterMark, value: SocketTuning.tunnelWriteBufferWaterMark)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        partner?.partnerWrite(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        partner?.partnerFlush()
    }

    func channelInactive(context: ChannelHandlerContext) {
        partner?.partnerClose()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent || event is ChannelShouldQuiesceEvent {
            context.close(promise: nil)
        } else if case ChannelEvent.inputClosed = event {
            // The client is done sending: pass the half-close on, and end the tunnel once both
            // directions are done.
            inputClosed = true
            if partner?.inputClosed ?? true {
                context.close(promise: nil)
            } else {
                partner?.partnerShutdownOutput()
            }
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable { partner?.partnerBecameWritable() }
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if partner?.partnerIsWritable ?? false {
            context.read()
        } else {
            pendingRead = true
        }
    }

    private func partnerWrite(_ data: NIOAny) {
        context?.write(data, promise: nil)
    }

    private func partnerFlush() {
        context?.flush()
    }

    private func partnerShutdownOutput() {
        guard let context else { return }
        context.flush()
        context.close(mode: .output, promise: nil)
    }

    private func partnerClose() {
        context?.close(promise: nil)
    }

    private var partnerIsWritable: Bool {
        context?.channel.isWritable ?? false
    }

    private func partnerBecameWritable() {
        if pendingRead, let context {
            pendingRead = false
            context.read()
        }
    }
}
