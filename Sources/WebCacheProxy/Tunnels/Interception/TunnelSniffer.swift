import NIOCore

/// The first handler of an intercepted `CONNECT` tunnel once it is established: it waits for the
/// client's first bytes and hands the tunnel to TLS interception when they open a TLS handshake
/// (a record of type 22), or to a byte-for-byte tunnel otherwise — also when the client says
/// nothing for a while (a protocol where the server speaks first).
final class TunnelSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// How long to wait for the client's first bytes before taking it for a protocol in which
    /// the server speaks first.
    static let firstBytesTimeout: TimeAmount = .milliseconds(500)
    /// Bytes held while a pass-through tunnel connects; a client that sends more is closed.
    static let heldLimit = 1 << 20

    private let intercept: (ChannelHandlerContext) throws -> Void
    private let passThrough: (ChannelHandlerContext, TunnelSniffer) -> Void
    private var decided = false
    private var held: [ByteBuffer] = []
    private var heldBytes = 0
    private var silence: Scheduled<Void>?

    /// - Parameters:
    ///   - intercept: adds the TLS server handlers after this one.
    ///   - passThrough: connects the destination, adds the tunnel after this handler and calls
    ///     ``release(context:)`` (or closes the channel).
    init(
        intercept: @escaping (ChannelHandlerContext) throws -> Void,
        passThrough: @escaping (ChannelHandlerContext, TunnelSniffer) -> Void
    ) {
        self.intercept = intercept
        self.passThrough = passThrough
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        silence = context.eventLoop.scheduleTask(in: Self.firstBytesTimeout) {
            let (sniffer, context) = loopBound.value
            guard !sniffer.decided else { return }
            sniffer.decided = true
            sniffer.passThrough(context, sniffer)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        silence?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let bytes = unwrapInboundIn(data)
        guard !decided else {
            hold(bytes, context: context)
            return
        }
        decided = true
        silence?.cancel()
        guard bytes.readableBytesView.first == 0x16 else {
            hold(bytes, context: context)
            passThrough(context, self)
            return
        }
        do {
            try intercept(context)
        } catch {
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
        context.fireChannelReadComplete()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {}

    private func hold(_ bytes: ByteBuffer, context: ChannelHandlerContext) {
        heldBytes += bytes.readableBytes
        guard heldBytes <= Self.heldLimit else {
            context.close(promise: nil)
            return
        }
        held.append(bytes)
    }

    /// Passes the bytes held on to the tunnel after this handler, and leaves.
    func release(context: ChannelHandlerContext) {
        for bytes in held { context.fireChannelRead(wrapInboundOut(bytes)) }
        held.removeAll()
        context.fireChannelReadComplete()
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
