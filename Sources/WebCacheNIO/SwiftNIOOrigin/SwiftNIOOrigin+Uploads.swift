import HTTPTypes
import NIOCore
import NIOPosix
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Uploads: a request body sent as it arrives.
extension SwiftNIOOrigin {
    /// Sends the request with its body as the body arrives (`Content-Length` when it declares
    /// one, chunked otherwise), hands interim responses to `interim`, and streams the response
    /// body; see `stream(_:streamingBody:interim:)`. The request is sent once: on a kept-alive
    /// connection idle for at most two seconds (well inside common keep-alive timeouts), or a
    /// new one. A response that comes before the body is all sent is handed over as it comes;
    /// the rest of the body is then not sent (the body's reader stops) and the connection is
    /// closed after the response.
    public func stream(
        _ request: HTTPRequest, streamingBody body: RequestBodyStream, interim: InterimResponseHandler?
    ) async throws -> OriginStream {
        let loop = MultiThreadedEventLoopGroup.currentEventLoop
        do {
            let endpoint = try requiredEndpoint(of: request)
            let head = Self.requestHead(
                request, endpoint: endpoint, bodyLength: body.length, chunked: body.length == nil)
            let connection =
                if let kept = pool.take(endpoint, preferring: loop, idleAtMost: Self.reuseForOtherMethodsWithin) {
                    kept
                } else {
                    try await connect(endpoint, on: loop ?? group.next())
                }
            return try await exchange(
                head, body: nil, streamingBody: body, on: connection, endpoint: endpoint, request: request,
                interim: interim)
        } catch {
            // Not sent: the body's producer is told (an `OriginError` is classified as itself).
            body.cancel()
            throw Self.classify(error, url: request.url, receiving: false)
        }
    }

    /// Writes a request's body after its head as the body arrives, a chunk at a time (the next
    /// is taken once the socket has the last: the client uploading is read only as fast as the
    /// origin takes it), chunk-framed when it declared no length. A body that fails (its client
    /// went away), or that is longer or shorter than it declared, fails the exchange as the
    /// request's fault (`OriginError.Code.invalidRequest`) and closes the connection; a
    /// connection that fails (the origin answered and closed) stops the body's reading.
    static func sendBody(
        _ body: RequestBodyStream, for url: URL?, on channel: any Channel, handler: NIOLoopBound<OriginExchangeHandler>
    ) async {
        let chunked = body.length == nil
        var sent = 0
        let failExchange: @Sendable (OriginError) -> Void = { error in
            channel.eventLoop.execute { handler.value.requestBodyFailed(error) }
        }
        // A client that goes away while the origin takes nothing ends the write waited on too.
        body.onFailure { failExchange(OriginError.requestBodyFailed($0, url: url)) }
        var chunks = body.makeAsyncIterator()
        while true {
            let next: Data?
            do {
                next = try await chunks.next()
            } catch {
                // Failed by its producer (told to the exchange above), or given up by this side.
                channel.closeAtOnce()
                return
            }
            guard let chunk = next else { break }
            guard !chunk.isEmpty else { continue }
            sent += chunk.count
            if let length = body.length, sent > length {
                body.cancel()
                return failExchange(
                    OriginError(.invalidRequest, "the request body is longer than the \(length) bytes it declared"))
            }
            var buffer = channel.allocator.buffer(capacity: chunk.count + (chunked ? 20 : 0))
            if chunked {
                buffer.writeString(String(chunk.count, radix: 16))
                buffer.writeStaticString("\r\n")
            }
            buffer.writeBytes(chunk)
            if chunked { buffer.writeStaticString("\r\n") }
            guard await write(buffer, to: channel) else { return body.cancel() }
            channel.eventLoop.execute { handler.value.requestBodyProgress() }
        }
        if let length = body.length, sent != length {
            return failExchange(
                OriginError(.invalidRequest, "the request body ended after \(sent) of the \(length) bytes it declared"))
        }
        if chunked {
            guard await write(ByteBuffer(string: "0\r\n\r\n"), to: channel) else { return }
        }
        channel.eventLoop.execute { handler.value.requestBodySent() }
    }

    /// Writes `buffer`; `false`, with the connection closed, when it could not be (the origin
    /// closed it: the connection's own failure ends the exchange).
    private static func write(_ buffer: ByteBuffer, to channel: any Channel) async -> Bool {
        do {
            try await channel.writeAndFlush(buffer)
            return true
        } catch {
            channel.closeAtOnce()
            return false
        }
    }
}
