import NIOCore
import NIOEmbedded
import Testing

@testable import WebCacheProxy

@Suite("What an intercepted tunnel's first bytes decide")
struct TunnelSnifferTests {
    @Test("a tunnel whose first bytes are not TLS is passed through with those bytes; TLS is handed to interception")
    func sniffing() throws {
        final class Seen: ChannelInboundHandler {
            typealias InboundIn = ByteBuffer
            var bytes = ""
            func channelRead(context: ChannelHandlerContext, data: NIOAny) {
                bytes += String(buffer: unwrapInboundIn(data))
            }
        }
        var passedThrough = false
        var intercepted = false
        let plain = EmbeddedChannel()
        let seen = Seen()
        let sniffer = TunnelSniffer(
            intercept: { _ in intercepted = true },
            passThrough: { context, sniffer in
                passedThrough = true
                try? context.pipeline.syncOperations.addHandler(seen, position: .after(sniffer))
                sniffer.release(context: context)
            })
        try plain.pipeline.syncOperations.addHandler(sniffer)
        try plain.writeInbound(ByteBuffer(string: "SSH-2.0-client\r\n"))
        #expect(passedThrough && !intercepted)
        #expect(seen.bytes == "SSH-2.0-client\r\n")

        passedThrough = false
        let tls = EmbeddedChannel()
        try tls.pipeline.syncOperations.addHandler(
            TunnelSniffer(intercept: { _ in intercepted = true }, passThrough: { _, _ in passedThrough = true }))
        try tls.writeInbound(ByteBuffer(bytes: [0x16, 0x03, 0x01, 0x00, 0x05]))
        #expect(intercepted && !passedThrough)
        _ = try? plain.finish()
        _ = try? tls.finish()
    }
}
