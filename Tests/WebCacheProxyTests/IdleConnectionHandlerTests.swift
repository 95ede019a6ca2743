import NIOCore
import NIOEmbedded
import Testing

@testable import WebCacheProxy

/// The idle timeout of a client connection, on a channel whose clock the test moves.
@Suite("A connection quiet for the idle timeout (IdleConnectionHandler)")
struct IdleConnectionHandlerTests {
    /// Counts the idle events that reach the handler behind it.
    final class IdleEvents: ChannelInboundHandler {
        typealias InboundIn = NIOAny
        var count = 0

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .all? = event as? IdleStateHandler.IdleStateEvent { count += 1 }
            context.fireUserInboundEventTriggered(event)
        }
    }

    static func connection() throws -> (EmbeddedChannel, IdleEvents) {
        let events = IdleEvents()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(IdleConnectionHandler(timeout: .seconds(30)))
        try channel.pipeline.syncOperations.addHandler(events)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, events)
    }

    @Test("fires once the connection has been quiet for the timeout, and again after each further timeout")
    func quiet() throws {
        let (channel, events) = try Self.connection()
        defer { _ = try? channel.finish() }
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(events.count == 0)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(events.count == 1)
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(events.count == 2)
    }

    @Test("a completed read or a flush starts the timeout again; a read still in progress holds it")
    func activity() throws {
        let (channel, events) = try Self.connection()
        defer { _ = try? channel.finish() }
        channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        try channel.writeInbound(ByteBuffer(string: "GET / HTTP/1.1\r\n"))  // read, then read complete
        channel.embeddedEventLoop.advanceTime(by: .seconds(20))
        #expect(events.count == 0, "a read 20 s ago")
        try channel.writeOutbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\n"))
        channel.embeddedEventLoop.advanceTime(by: .seconds(29))
        #expect(events.count == 0, "a flush 29 s ago")
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(events.count == 1)

        // Bytes read whose read has not completed count as activity until it does.
        channel.pipeline.syncOperations.fireChannelRead(NIOAny(ByteBuffer(string: "Host: x\r\n")))
        channel.embeddedEventLoop.advanceTime(by: .seconds(90))
        #expect(events.count == 1)
        channel.pipeline.fireChannelReadComplete()
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(events.count == 2)
    }

    @Test("nothing fires once the connection is closed or the handler removed")
    func closed() throws {
        let (channel, events) = try Self.connection()
        try channel.close().wait()
        channel.embeddedEventLoop.advanceTime(by: .seconds(120))
        #expect(events.count == 0)

        let (other, otherEvents) = try Self.connection()
        defer { _ = try? other.finish() }
        let handler = try other.pipeline.syncOperations.handler(type: IdleConnectionHandler.self)
        try other.pipeline.syncOperations.removeHandler(handler).wait()
        other.embeddedEventLoop.advanceTime(by: .seconds(120))
        #expect(otherEvents.count == 0)
    }
}
