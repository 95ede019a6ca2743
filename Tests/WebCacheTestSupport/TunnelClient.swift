import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// A client that opens a `CONNECT` tunnel through a proxy, optionally speaks TLS inside it, sends
/// raw bytes and collects what comes back: for what client libraries do not send (a `Host` that
/// is not the tunnel's, an upgrade, bytes that are not TLS).
public enum TunnelClient {
    /// What came back.
    public struct Exchange: Sendable {
        /// The proxy's answer to the `CONNECT` (its head).
        public var connectAnswer: String
        /// The bytes received inside the tunnel, as text.
        public var received: String
    }

    /// Connects to the proxy on `proxyPort`, sends `CONNECT target`, and — when the proxy
    /// answers 200 — starts TLS with `tls` (for `serverName`) unless `nil`, sends `payload`, and
    /// collects bytes until the peer closes, `until` appears in them, or `timeout` passes.
    public static func exchange(
        proxyPort: Int, target: String, tls: TLSConfiguration?, serverName: String? = nil, payload: String,
        until marker: String? = nil, timeout: TimeAmount = .seconds(5)
    ) async throws -> Exchange {
        let collector = Collector()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(collector) }
            }
            .connect(host: "127.0.0.1", port: proxyPort).get()
        defer { channel.close(promise: nil) }
        // Each step names itself when it fails: a closed channel says nothing of where.
        try await step("sending CONNECT \(target)") {
            try await channel.writeAndFlush(ByteBuffer(string: "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n"))
        }
        let answer = try await step("reading the answer to CONNECT \(target)") {
            try await collector.wait(for: "\r\n\r\n", timeout: timeout, on: channel.eventLoop)
        }
        guard answer.hasPrefix("HTTP/1.1 200") else { return Exchange(connectAnswer: answer, received: "") }
        collector.reset()
        if let tls {
            let context = try NIOSSLContext(configuration: tls)
            try await step("starting TLS in the tunnel to \(target)") {
                try await channel.eventLoop.submit {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: serverName), position: .first)
                }.get()
            }
        }
        try await step("sending \(payload.utf8.count) bytes in the tunnel to \(target)") {
            try await channel.writeAndFlush(ByteBuffer(string: payload))
        }
        let received = try await step("reading the answer in the tunnel to \(target)") {
            try await collector.wait(for: marker, timeout: timeout, on: channel.eventLoop)
        }
        return Exchange(connectAnswer: answer, received: received)
    }

    /// A failure of one step of an exchange, with the step's name.
    public struct StepFailure: Error, CustomStringConvertible {
        /// The step.
        public var step: String
        /// The error it met.
        public var cause: any Error
        /// The step, then the error.
        public var description: String { "\(step): \(cause)" }
    }

    private static func step<Result>(_ name: String, _ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch {
            throw StepFailure(step: name, cause: error)
        }
    }

    private final class Collector: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        private let lock = NSLock()
        private var text = ""
        private var closed = false
        private var failure: (any Error)?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let bytes = unwrapInboundIn(data)
            lock.withLock { text += String(buffer: bytes) }
        }

        func channelInactive(context: ChannelHandlerContext) {
            lock.withLock { closed = true }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            lock.withLock { failure = error }
            context.close(promise: nil)
        }

        func reset() { lock.withLock { text = "" } }

        /// The text so far, once `marker` is in it, the peer has closed, or `timeout` passed.
        func wait(for marker: String?, timeout: TimeAmount, on eventLoop: any EventLoop) async throws -> String {
            let deadline = NIODeadline.now() + timeout
            while NIODeadline.now() < deadline {
                let (text, closed, failure) = lock.withLock { (self.text, self.closed, self.failure) }
                if let failure, text.isEmpty { throw failure }
                if closed || (marker.map { text.contains($0) } ?? false) { return text }
                try await Task.sleep(for: .milliseconds(10))
            }
            return lock.withLock { text }
        }
    }
}
