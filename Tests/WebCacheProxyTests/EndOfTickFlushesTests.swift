import NIOCore
import NIOEmbedded
import Testing

@testable import WebCacheProxy

@Suite("Whole answers flushed at the end of their loop's tick")
struct EndOfTickFlushesTests {
    @Test("answers written in one tick wait for its end, then go out together; the next tick starts a new round")
    func flushedTogether() throws {
        let loop = EmbeddedEventLoop()
        let first = EmbeddedChannel(loop: loop)
        let second = EmbeddedChannel(loop: loop)
        let flushes = EndOfTickFlushes(loop: loop)
        first.write(ByteBuffer(string: "first"), promise: nil)
        flushes.flush(first)
        second.write(ByteBuffer(string: "second"), promise: nil)
        flushes.flush(second)
        #expect(try first.readOutbound(as: ByteBuffer.self) == nil)
        #expect(try second.readOutbound(as: ByteBuffer.self) == nil)
        loop.run()
        #expect(try first.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "first"))
        #expect(try second.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "second"))

        first.write(ByteBuffer(string: "again"), promise: nil)
        flushes.flush(first)
        #expect(try first.readOutbound(as: ByteBuffer.self) == nil)
        loop.run()
        #expect(try first.readOutbound(as: ByteBuffer.self) == ByteBuffer(string: "again"))
        _ = try first.finish()
        _ = try second.finish()
    }

    @Test("each loop has one batch, the same for every connection on it")
    func oneBatchPerLoop() {
        let table = EndOfTickFlushTable()
        let loop = EmbeddedEventLoop()
        let other = EmbeddedEventLoop()
        #expect(table.batch(for: loop).value === table.batch(for: loop).value)
        #expect(table.batch(for: loop).value !== table.batch(for: other).value)
    }
}
