import ArgumentParser
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The least a server on SwiftNIO does to answer a range of one file: read the request, find
/// its `Range`, write a 206 head and the range from an open file (`sendfile`), flush when the
/// read is done. No cache, no lookup, no validation of anything: a measuring stick for
/// `scripts/bench-seek-floor.sh`, not a server. Two ways to read requests: SwiftNIO's HTTP/1
/// decoder (`--decoder nio`, as a SwiftNIO server usually does), or none (`--decoder none`: the
/// end of a head and `Range: bytes=` found by a byte search), which leaves SwiftNIO's channel,
/// its pipeline and the system calls alone.
@main
struct SeekFloor: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "seek-floor",
        abstract: "Answer range requests for one file with SwiftNIO alone (a benchmark's floor).")

    enum Decoder: String, ExpressibleByArgument {
        case nio
        case none
    }

    @Option(help: "The port to listen on, on 127.0.0.1.")
    var port: Int = 8020

    @Option(help: "How requests are read: nio (SwiftNIO's HTTP/1 decoder) or none (a byte search).")
    var decoder: Decoder = .nio

    @Argument(help: "The file whose ranges are served.")
    var file: String

    func run() throws {
        let descriptor = open(file, O_RDONLY)
        guard descriptor >= 0 else { throw ValidationError("cannot open \(file)") }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ValidationError("cannot stat \(file)") }
        let served = ServedFile(descriptor: descriptor, size: Int(status.st_size))
        let decoder = self.decoder
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    switch decoder {
                    case .nio:
                        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder()))
                        try pipeline.addHandler(DecodedRanges(file: served))
                    case .none:
                        try pipeline.addHandler(SearchedRanges(file: served))
                    }
                }
            }
            .bind(host: "127.0.0.1", port: port)
            .wait()
        print("serving ranges of \(file) on 127.0.0.1:\(port), decoder \(decoder.rawValue)")
        try server.closeFuture.wait()
    }
}

/// The file whose ranges are served: one descriptor, shared (each connection has a duplicate).
struct ServedFile: Sendable {
    var descriptor: CInt
    var size: Int

    /// The range `bytes=first-last` names, clamped to the file; the whole file without one.
    func range(first: Int?, last: Int?) -> ClosedRange<Int> {
        guard let first, first < size else { return 0...(size - 1) }
        return first...min(last ?? size - 1, size - 1)
    }

    /// Writes the 206 head and the range, unflushed.
    func write(_ range: ClosedRange<Int>, handle: NIOFileHandle, context: ChannelHandlerContext) {
        var head = context.channel.allocator.buffer(capacity: 192)
        head.writeString(
            "HTTP/1.1 206 Partial Content\r\nContent-Type: application/octet-stream\r\nAccept-Ranges: bytes\r\n"
                + "Content-Range: bytes \(range.lowerBound)-\(range.upperBound)/\(size)\r\n"
                + "Content-Length: \(range.count)\r\n\r\n")
        context.write(NIOAny(IOData.byteBuffer(head)), promise: nil)
        let region = FileRegion(fileHandle: handle, readerIndex: range.lowerBound, endIndex: range.upperBound + 1)
        context.write(NIOAny(IOData.fileRegion(region)), promise: nil)
    }
}

/// Requests from SwiftNIO's decoder: the `Range` field of each head.
final class DecodedRanges: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart

    private let file: ServedFile
    private let handle: NIOFileHandle
    private var range: ClosedRange<Int>?
    private var written = false

    init(file: ServedFile) {
        self.file = file
        handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: dup(file.descriptor))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            var first: Int?
            var last: Int?
            if let value = head.headers.first(name: "range"), value.hasPrefix("bytes=") {
                let bounds = value.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
                first = bounds.first.flatMap { Int($0) }
                last = bounds.dropFirst().first.flatMap { Int($0) }
            }
            range = file.range(first: first, last: last)
        case .body:
            break
        case .end:
            file.write(range ?? file.range(first: nil, last: nil), handle: handle, context: context)
            written = true
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if written {
            written = false
            context.flush()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        try? handle.close()
    }
}

/// Requests found by a byte search: a head ends at CRLF CRLF, its range follows `Range: bytes=`.
final class SearchedRanges: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let file: ServedFile
    private let handle: NIOFileHandle
    private var pending = ByteBuffer()
    private var written = false

    init(file: ServedFile) {
        self.file = file
        handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: dup(file.descriptor))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        pending.writeBuffer(&bytes)
        while let (length, first, last) = pending.withUnsafeReadableBytes(Self.nextRequest) {
            pending.moveReaderIndex(forwardBy: length)
            file.write(file.range(first: first, last: last), handle: handle, context: context)
            written = true
        }
        if pending.readableBytes == 0 { pending.clear() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if written {
            written = false
            context.flush()
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        try? handle.close()
    }

    /// The length of the first whole head in `bytes`, and its range's bounds.
    private static func nextRequest(_ bytes: UnsafeRawBufferPointer) -> (Int, Int?, Int?)? {
        let crlfcrlf: [UInt8] = [13, 10, 13, 10]
        guard let end = find(crlfcrlf, in: bytes, from: 0, to: bytes.count) else { return nil }
        let needle = Array("\nRange: bytes=".utf8)
        guard let start = find(needle, in: bytes, from: 0, to: end) else { return (end + 4, nil, nil) }
        var index = start + needle.count
        func number() -> Int? {
            var value: Int?
            while index < end, bytes[index] >= 48, bytes[index] <= 57 {
                value = (value ?? 0) * 10 + Int(bytes[index] - 48)
                index += 1
            }
            return value
        }
        let first = number()
        index += 1
        return (end + 4, first, number())
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        guard to - from >= needle.count else { return nil }
        for start in from...(to - needle.count) where bytes[start] == needle[0] {
            if (1..<needle.count).allSatisfy({ bytes[start + $0] == needle[$0] }) { return start }
        }
        return nil
    }
}
