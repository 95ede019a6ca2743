import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import WebCacheTestSupport

/// The proxy's handling of what a client sends, on a connection without a socket
/// (``SocketlessProxy``): the bytes go to the proxy as they would come from a client, and what
/// it writes back must be HTTP/1.1 responses, framed, one per request, in order.
///
/// The first byte of an input chooses how it is sent: bits 0–5 where the bytes are split into
/// two reads, bit 6 a half-close after them, bit 7 a wait past the head timeout. The rest are
/// the bytes. A reference decoder (SwiftNIO's, alone) says how many requests they hold and
/// which are `HEAD`; then, within five seconds:
/// - what the proxy wrote reads as whole responses (``ResponseReader``), at most one more than
///   the requests (the refusal of bytes that are not HTTP);
/// - a connection the proxy left open answered every request, and a half-closed one is closed.
enum ProxyRequestTarget {
    /// One proxy for every input, like a long-running process; its cache is in a temporary
    /// directory.
    private static let server: SocketlessProxy = {
        do {
            return try SocketlessProxy {
                $0.maximumHeaderSize = 1024
                $0.maximumRequestBodySize = 1000
                $0.requestHeadTimeout = .seconds(10)
            }
        } catch {
            fatalError("cannot make the proxy under test: \(error)")
        }
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let control = input.first else { return }
        let bytes = Array(input.dropFirst())
        let split = min(Int(control & 0x3F) * 4, bytes.count)
        let halfClose = control & 0x40 != 0
        let waitPastHeadTimeout = control & 0x80 != 0
        let reference = ReferenceDecoding(bytes)
        let server = self.server

        let finished = DispatchSemaphore(value: 0)
        let outcome = NIOLockedValueBox<Result<(responses: [ResponseReader.Response], closed: Bool), any Error>?>(nil)
        Task {
            let result: Result<(responses: [ResponseReader.Response], closed: Bool), any Error>
            do {
                let connection = try await server.connect()
                if split > 0 { try await connection.send(Array(bytes[..<split])) }
                if split < bytes.count { try await connection.send(Array(bytes[split...])) }
                if halfClose { try await connection.closeInput() }
                _ = try await connection.responses(reference.requests, methods: reference.methods, timeout: .seconds(5))
                if waitPastHeadTimeout { await connection.advanceTime(by: .seconds(11)) }
                // Then a moment for a wrong extra answer, or a close, to show.
                result = .success(
                    try await connection.responses(
                        reference.requests + 1, methods: reference.methods, timeout: .milliseconds(5)))
                await connection.close()
            } catch {
                result = .failure(error)
            }
            outcome.withLockedValue { $0 = result }
            finished.signal()
        }
        guard finished.wait(timeout: .now() + .seconds(30)) == .success else {
            preconditionFailure("the proxy did not finish with \(bytes.count) bytes in 30 s: \(printable(bytes))")
        }
        let (responses, closed): ([ResponseReader.Response], Bool)
        switch outcome.withLockedValue({ $0 })! {
        case .success(let read): (responses, closed) = read
        case .failure(let error): preconditionFailure("\(error) for \(printable(bytes))")
        }
        let finals = responses.filter { $0.status >= 200 }.count
        precondition(
            finals <= reference.requests + 1, "\(finals) answers to \(reference.requests) requests: \(printable(bytes))"
        )
        if !closed {
            precondition(
                !halfClose, "half-closed after \(reference.requests) requests, still open: \(printable(bytes))")
            precondition(
                !reference.malformed, "bytes that are not HTTP, and the connection still open: \(printable(bytes))")
            precondition(
                finals == reference.requests,
                "\(finals) answers to \(reference.requests) requests, connection open: \(printable(bytes))")
        }
    }

    private static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(300), as: UTF8.self).debugDescription
    }
}

/// What SwiftNIO's request decoder alone makes of some bytes. Where it stops after a `CONNECT`
/// or an upgrade (the bytes that follow are not HTTP's if a tunnel is made), it goes on with
/// the bytes after: this proxy (reverse mode) answers such a request without a tunnel, and the
/// connection goes on in HTTP.
private struct ReferenceDecoding {
    /// Requests whose end was read.
    var requests = 0
    /// Their methods, in order (for the framing of their answers).
    var methods: [String] = []
    /// Whether the decoder failed on bytes after them.
    var malformed = false

    init(_ bytes: [UInt8]) {
        var rest = ByteBuffer(bytes: bytes)
        // Bounded: each round takes at least one request's bytes.
        for _ in 0...bytes.count {
            guard let after = decode(rest) else { break }
            rest = after
        }
        methods = Array(methods.prefix(requests))
    }

    /// Decodes `bytes`; returns the bytes after a request that stopped the decoder (a `CONNECT`
    /// or an upgrade), or `nil` when it did not stop on one.
    private mutating func decode(_ bytes: ByteBuffer) -> ByteBuffer? {
        let decoder = ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes))
        let channel = EmbeddedChannel(handler: decoder)
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(bytes)
        } catch {
            malformed = true
        }
        var lastHead: HTTPRequestHead?
        var ended = false
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            switch part {
            case .head(let head):
                methods.append(head.method.rawValue)
                lastHead = head
                ended = false
            case .end:
                requests += 1
                ended = true
            case .body: break
            }
        }
        guard !malformed, ended, let head = lastHead, head.method == .CONNECT || Self.asksToUpgrade(head) else {
            return nil
        }
        // Synchronously, on the embedded channel's own loop (the decoder is not Sendable).
        channel.pipeline.syncOperations.removeHandler(decoder, promise: nil)
        channel.embeddedEventLoop.run()
        guard let rest = try? channel.readInbound(as: ByteBuffer.self), rest.readableBytes > 0 else { return nil }
        return rest
    }

    private static func asksToUpgrade(_ head: HTTPRequestHead) -> Bool {
        !head.headers["upgrade"].isEmpty
            && head.headers["connection"].contains { value in
                value.lowercased().split(separator: ",").contains {
                    $0.trimmingCharacters(in: .whitespaces) == "upgrade"
                }
            }
    }
}
