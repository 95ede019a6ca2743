import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Runs `connections` clients on one event loop for a warm-up second and `duration` seconds,
/// counting the requests (and, without keep-alive, the connections) completed in the measured
/// window and their latencies.
final class LoadRun: @unchecked Sendable {
    struct Result {
        var requests: Int
        var errors: Int
        var seconds: Double
        var latenciesMicroseconds: [UInt32]
        var keepAlive: Bool
        var errorKinds: [String: Int]

        var json: String {
            let sorted = latenciesMicroseconds.sorted()
            func percentile(_ p: Double) -> Double {
                sorted.isEmpty ? 0 : Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1000
            }
            return String(
                format:
                    #"{"mode": "%@", "requests": %d, "errors": %d, "seconds": %.2f, "per_second": %.1f, "p50_ms": %.3f, "p99_ms": %.3f}"#,
                keepAlive ? "keep-alive" : "new-connection", requests, errors, seconds, Double(requests) / seconds,
                percentile(0.5), percentile(0.99)
            )
            .dropLast() + #", "error_kinds": "#
                + String(decoding: (try? JSONEncoder().encode(errorKinds)) ?? Data("{}".utf8), as: UTF8.self) + "}"
        }
    }

    private let plan: LoadPlan
    private let connections: Int
    private let duration: Double
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    // Touched on the one event loop only.
    private var measuring = false
    private var stopping = false
    private var requests = 0
    private var errors = 0
    private var errorKinds: [String: Int] = [:]
    private var latencies: [UInt32] = []
    private var open = 0
    private var finished: EventLoopPromise<Void>?

    init(plan: LoadPlan, connections: Int, duration: Double) {
        self.plan = plan
        self.connections = connections
        self.duration = duration
    }

    func run() async throws -> Result {
        let loop = group.next()
        let done = loop.makePromise(of: Void.self)
        try await loop.submit {
            self.finished = done
            self.latencies.reserveCapacity(1 << 20)
            for _ in 0..<self.connections { self.openConnection(on: loop) }
            loop.scheduleTask(in: .seconds(1)) { self.measuring = true }
            loop.scheduleTask(in: .nanoseconds(Int64((1 + self.duration) * 1e9))) {
                self.measuring = false
                self.stopping = true
            }
        }.get()
        try await done.futureResult.get()
        try await group.shutdownGracefully()
        return Result(
            requests: requests, errors: errors, seconds: duration, latenciesMicroseconds: latencies,
            keepAlive: plan.keepAlive, errorKinds: errorKinds)
    }

    /// Connects (through the proxy's CONNECT when there is one), starts TLS and HTTP, and
    /// sends the first request.
    private func openConnection(on loop: any EventLoop) {
        open += 1
        let plan = self.plan
        let bootstrap = ClientBootstrap(group: loop)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(5))
        let address = plan.proxy ?? plan.target
        bootstrap.connect(host: address.host, port: address.port)
            .flatMap { channel -> EventLoopFuture<any Channel> in
                guard plan.proxy != nil else { return channel.eventLoop.makeSucceededFuture(channel) }
                let established = channel.eventLoop.makePromise(of: Void.self)
                do {
                    try channel.pipeline.syncOperations.addHandler(ConnectAnswer(established))
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
                channel.writeAndFlush(
                    ByteBuffer(string: "CONNECT \(plan.target.text) HTTP/1.1\r\nHost: \(plan.target.text)\r\n\r\n"),
                    promise: nil)
                return established.futureResult.map { channel }
            }
            .flatMapThrowing { channel -> any Channel in
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(NIOSSLClientHandler(context: plan.tls, serverHostname: nil))
                try pipeline.addHandler(HTTPRequestEncoder())
                try pipeline.addHandler(ByteToMessageHandler(HTTPResponseDecoder()))
                try pipeline.addHandler(Driver(run: self))
                return channel
            }
            .whenComplete { result in
                if case .failure(let error) = result {
                    self.failed(error)
                    self.connectionEnded(on: loop)
                }
            }
    }

    fileprivate func completed(started: UInt64, status: Int) {
        guard measuring else { return }
        if status == 200 {
            requests += 1
            latencies.append(UInt32(min(UInt64(UInt32.max), (DispatchTime.now().uptimeNanoseconds - started) / 1000)))
        } else {
            errors += 1
        }
    }

    fileprivate func failed(_ error: any Error) {
        guard measuring else { return }
        errors += 1
        errorKinds["\(error)".prefix(120).description, default: 0] += 1
    }

    fileprivate var keepGoing: Bool { !stopping }

    fileprivate func connectionEnded(on loop: any EventLoop) {
        open -= 1
        if !stopping {
            openConnection(on: loop)
        } else if open == 0 {
            finished?.succeed()
        }
    }

    fileprivate func request(_ channel: any Channel) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: plan.path)
        head.headers.add(name: "Host", value: plan.target.text)
        if !plan.keepAlive { head.headers.add(name: "Connection", value: "close") }
        return head
    }

    fileprivate var keepAlive: Bool { plan.keepAlive }
}

/// A proxy's answer to `CONNECT` other than 200.
struct ConnectRefused: Error, CustomStringConvertible {
    var answer: String
    var description: String { "CONNECT answered \(answer)" }
}

/// Reads a proxy's answer to `CONNECT` up to the end of its head, then leaves.
private final class ConnectAnswer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    private var text = ""
    private let established: EventLoopPromise<Void>

    init(_ established: EventLoopPromise<Void>) {
        self.established = established
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        text += String(buffer: unwrapInboundIn(data))
        guard text.contains("\r\n\r\n") else { return }
        if text.hasPrefix("HTTP/1.1 200") {
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            established.succeed()
        } else {
            established.fail(ConnectRefused(answer: String(text.prefix(while: { $0 != "\r" }))))
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        established.fail(ChannelError.eof)
    }
}

/// Sends a request, waits for the whole response, and sends the next (keep-alive) or closes.
private final class Driver: ChannelInboundHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart
    private let run: LoadRun
    private var started: UInt64 = 0
    private var status = 0

    init(run: LoadRun) {
        self.run = run
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { send(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        send(context)
        context.fireChannelActive()
    }

    private func send(_ context: ChannelHandlerContext) {
        started = DispatchTime.now().uptimeNanoseconds
        context.write(wrapOutboundOut(.head(run.request(context.channel))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            status = Int(head.status.code)
        case .body:
            break
        case .end:
            run.completed(started: started, status: status)
            if run.keepAlive && run.keepGoing {
                send(context)
            } else {
                context.close(promise: nil)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        run.connectionEnded(on: context.eventLoop)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case NIOSSLError.uncleanShutdown = error, status != 0 {
            // The server closed after the answer (Connection: close) without TLS's close_notify.
        } else {
            run.failed(error)
        }
        context.close(promise: nil)
    }
}
