import Foundation
import NIOCore
import Testing

@testable import WebCacheNIO

@Suite("Origin body chunks as Data")
struct BodyChunkTests {
    static func filled(_ count: Int, capacity: Int? = nil) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: capacity ?? count)
        buffer.writeBytes((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        return buffer
    }

    static func address(_ buffer: ByteBuffer) -> UnsafeRawPointer? {
        buffer.withUnsafeReadableBytes { $0.baseAddress }
    }

    static func address(_ data: Data) -> UnsafeRawPointer? {
        data.withUnsafeBytes { $0.baseAddress }
    }

    @Test(
        "a large chunk that fills its storage is referenced where it lies, and a later write to the buffer copies the storage instead of changing the Data"
    )
    func referenced() {
        var buffer = Self.filled(64 << 10)
        let expected = Data(buffer.readableBytesView)
        let chunk = buffer.bodyChunk()
        #expect(chunk == expected)
        #expect(Self.address(chunk) == Self.address(buffer), "no copy")
        buffer.setBytes([0xFF, 0xFF, 0xFF], at: buffer.readerIndex)
        #expect(chunk == expected, "the chunk keeps the bytes it was given")
        #expect(Self.address(buffer) != Self.address(chunk), "the write went to a copy of the storage")
    }

    @Test("once the Data goes, the storage is the buffer's alone again: writing to it needs no copy")
    func released() {
        var buffer = Self.filled(64 << 10)
        let before = Self.address(buffer)
        do {
            let chunk = buffer.bodyChunk()
            #expect(chunk.count == 64 << 10)
        }
        buffer.setBytes([1, 2, 3], at: buffer.readerIndex)
        #expect(Self.address(buffer) == before)
    }

    @Test(
        "small chunks, empty ones and slices that would keep a mostly unused storage alive are copied",
        arguments: [
            (count: 1024, capacity: 1024),
            (count: (16 << 10) - 1, capacity: 16 << 10),
            (count: 20 << 10, capacity: 64 << 10),
            (count: 0, capacity: 64 << 10),
        ])
    func copied(_ shape: (count: Int, capacity: Int)) {
        let buffer = Self.filled(shape.count, capacity: shape.capacity)
        let chunk = buffer.bodyChunk()
        #expect(chunk == Data(buffer.readableBytesView))
        if shape.count > 0 { #expect(Self.address(chunk) != Self.address(buffer)) }
    }

    @Test(
        "a slice that is most of its storage (a body after its response head in one read) is referenced at its offset")
    func slice() throws {
        var read = Self.filled(64 << 10)
        read.moveReaderIndex(forwardBy: 300)  // the head
        let sliced = read.readSlice(length: read.readableBytes)
        let body = try #require(sliced)
        let chunk = body.bodyChunk()
        #expect(chunk == Data(body.readableBytesView))
        #expect(Self.address(chunk) == Self.address(body))
    }

    @Test(
        "a chunk referenced where it lies gives its buffer back while it lives; a copied chunk, a slice of a chunk and a chunk let go do not"
    )
    func buffersFoundAgain() throws {
        let buffer = Self.filled(64 << 10)
        do {
            let chunk = buffer.bodyChunk()
            let found = try #require(ChunkBuffers.buffer(of: chunk))
            #expect(found == buffer)
            #expect(Self.address(found) == Self.address(chunk), "the same bytes, not a copy")
            let again = buffer.bodyChunk()
            #expect(ChunkBuffers.buffer(of: again) != nil)
            #expect(ChunkBuffers.buffer(of: chunk.prefix(1000)) == nil, "a slice is not the buffer")
            #expect(ChunkBuffers.buffer(of: Data(chunk)) == nil, "nor is a copy")
            #expect(ChunkBuffers.buffer(of: Self.filled(1024).bodyChunk()) == nil, "a small chunk is copied")
            withExtendedLifetime(again) {}
            withExtendedLifetime(chunk) {}
        }
        let sameBytes = buffer.withUnsafeReadableBytes { bytes in
            Data(
                bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count,
                deallocator: .none)
        }
        #expect(ChunkBuffers.buffer(of: sameBytes) == nil, "the chunks let go took their entry with them")
    }
}
