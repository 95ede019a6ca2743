import AsyncHTTPClient
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import WebCache
import WebCacheNIO

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An origin on AsyncHTTPClient: the natural choice for services, CLIs and the proxy.
///
/// It owns an `HTTPClient` that never follows redirects (the cache stores each hop); call
/// ``shutdown()`` when done.
///
/// A connection that cannot be made (refused, a name that does not resolve, no route) fails the
/// request at once as `OriginError.connectionFailed`: AsyncHTTPClient would otherwise retry
/// with back-off until the connect timeout, and a cache that is offline must know it now. A
/// GET or HEAD whose kept-alive connection turns out closed by the origin is sent once more
/// on a new connection.
public final class AsyncHTTPClientOrigin: OriginFetching {
    private let client: HTTPClient
    private let timeout: TimeAmount
    private let maximumBodySize: Int

    /// Creates an origin with its own client.
    /// - Parameters:
    ///   - connectTimeout: how long to wait for a connection before the origin counts as unreachable.
    ///   - timeout: the deadline for a whole exchange.
    ///   - maximumBodySize: the largest body accepted from the origin.
    ///   - maximumConnectionsPerHost: HTTP/1.1 connections kept per host (the preloader raises it).
    ///   - trust: the certificate authorities HTTPS origins are verified against (the system's
    ///     roots by default); verification is never turned off.
    public init(
        connectTimeout: Duration = .seconds(10), timeout: Duration = .seconds(60), maximumBodySize: Int = 512 << 20,
        maximumConnectionsPerHost: Int = 8, trust: OriginTrust = OriginTrust()
    ) {
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: trust.clientConfiguration(), redirectConfiguration: .disallow)
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = maximumConnectionsPerHost
        configuration.timeout = .init(connect: .nanoseconds(connectTimeout.nanoseconds))
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.decompression = .disabled
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = .nanoseconds(timeout.nanoseconds)
        self.maximumBodySize = maximumBodySize
    }

    /// Closes the client's connections.
    public func shutdown() async throws {
        try await client.shutdown()
    }

    /// Sends the request; see `fetch(_:body:)`.
    public func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
        let (url, response) = try await execute(request, body: body)
        do {
            let coding = Self.transferCoding(of: response)
            let collected = try await response.body.collect(upTo: maximumBodySize)
            guard let coding else {
                return OriginResponse(head: Self.head(of: response), body: Data(collected.readableBytesView))
            }
            let decoding = try TransferDecoding(coding: coding, limit: maximumBodySize)
            let content = try collected.withUnsafeReadableBytes { bytes throws(TransferDecodingError) in
                try decoding.decode(bytes)
            }
            try decoding.finish()
            return OriginResponse(head: Self.head(of: response), body: content)
        } catch {
            throw Self.classify(error, url: url, receiving: true)
        }
    }

    /// Sends the request and streams the body; see `stream(_:body:)`. The body is read from
    /// AsyncHTTPClient (and so from the connection) only as fast as the engine's reader takes it
    /// when the engine follows its pace (`OriginStream.pacing`); given up, the request is
    /// cancelled and its connection closed.
    public func stream(_ request: HTTPRequest, body: Data?) async throws -> OriginStream {
        let (url, response) = try await execute(request, body: body)
        return streamed(response, from: url)
    }

    /// Sends the request with its body as the body arrives (`Content-Length` when it declares
    /// one, chunked otherwise) and streams the response body; see
    /// `stream(_:streamingBody:interim:)`. The request is sent once, never again on another
    /// connection. The client's `timeout` runs until the response head: an origin that answers
    /// once it has the whole body must have had it within that time, so give an origin for large
    /// uploads a long one. AsyncHTTPClient does not hand on interim responses, so `interim` is
    /// never called.
    ///
    /// An origin that answers with a status of 300 or more before the body is all sent gets no
    /// more of it: its answer is handed over, and the body's reader stops once that answer has
    /// been read, which tells the body's producer. A body whose producer fails (the uploading
    /// client went away) fails the exchange with `OriginError.Code.invalidRequest`.
    public func stream(
        _ request: HTTPRequest, streamingBody body: RequestBodyStream, interim: InterimResponseHandler?
    ) async throws -> OriginStream {
        let length: HTTPClientRequest.Body.Length = body.length.map { .known(Int64($0)) } ?? .unknown
        let outgoing = HTTPClientRequest.Body.stream(UploadChunks(body: body), length: length)
        do {
            let (url, response) = try await execute(request, body: outgoing, retrying: false)
            // Whatever the origin did not take is not sent: its producer stops reading.
            return streamed(response, from: url, whenRead: { body.cancel() })
        } catch {
            body.cancel()
            throw error
        }
    }

    /// `response`'s body as a stream at its reader's pace; `whenRead` runs once it has been read
    /// to the end, has failed or has been given up.
    private func streamed(
        _ response: HTTPClientResponse, from url: URL, whenRead: @escaping @Sendable () -> Void = {}
    ) -> OriginStream {
        let limit = maximumBodySize
        let coding = Self.transferCoding(of: response)
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let gate = BodyReadGate()
        let pacing = OriginBodyPacing(resume: { gate.resume() }, abandon: { gate.abandon() })
        let pump = Task {
            defer { whenRead() }
            var received = 0
            do {
                let decoding = try coding.map { coding throws(TransferDecodingError) in
                    try TransferDecoding(coding: coding, limit: limit)
                }
                var chunks = response.body.makeAsyncIterator()
                while !gate.isAbandoned, let buffer = try await chunks.next() {
                    let chunk =
                        try decoding.map { decoding in
                            try buffer.withUnsafeReadableBytes { bytes throws(TransferDecodingError) in
                                try decoding.decode(bytes)
                            }
                        } ?? Data(buffer.readableBytesView)
                    guard !chunk.isEmpty else { continue }
                    received += chunk.count
                    guard received <= limit else { throw NIOTooManyBytesError(maxBytes: limit) }
                    // Counted before it is handed over: its reader may take it (and say so) first.
                    let seen = gate.resumes
                    let pause = pacing.produced(chunk.count)
                    continuation.yield(chunk)
                    if pause { try await gate.waitForResume(after: seen) }
                }
                if gate.isAbandoned { throw CancellationError() }
                try decoding?.finish()
                continuation.finish()
            } catch {
                continuation.finish(throwing: Self.classify(error, url: url, receiving: true))
            }
        }
        gate.cancelOnAbandon(pump)
        continuation.onTermination = { termination in
            if case .cancelled = termination { pump.cancel() }
        }
        return OriginStream(head: Self.head(of: response), body: stream, pacing: pacing)
    }

    private func execute(_ request: HTTPRequest, body: Data?) async throws -> (URL, HTTPClientResponse) {
        try await execute(
            request, body: body.map { .bytes(ByteBuffer(bytes: $0)) }, retrying: Self.isRetryable(request.method))
    }

    /// Sends `request`; when `retrying`, once more on a new connection if the first one turns
    /// out dropped before any answer.
    private func execute(_ request: HTTPRequest, body: HTTPClientRequest.Body?, retrying: Bool) async throws -> (
        URL, HTTPClientResponse
    ) {
        guard let url = request.url else { throw OriginError(.invalidRequest, "the request has no absolute URL") }
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headerFields { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        outgoing.body = body
        do {
            return (url, try await client.execute(outgoing, timeout: timeout))
        } catch  where retrying && Self.connectionDropped(error) {
            // A kept-alive connection the origin had closed as the request went out, or one left
            // unreadable by the exchange before (bytes past a response's end): the one retry
            // that helps, on a new connection (browsers do the same for idempotent requests).
            do {
                return (url, try await client.execute(outgoing, timeout: timeout))
            } catch {
                throw Self.classify(error, url: url, receiving: false)
            }
        } catch {
            throw Self.classify(error, url: url, receiving: false)
        }
    }

    private static func isRetryable(_ method: HTTPRequest.Method) -> Bool {
        method == .get || method == .head
    }

    /// Whether `error` is a connection closed or reset under a request before any answer, or a
    /// kept-alive connection whose next response could not be parsed.
    static func connectionDropped(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
        return ConnectionErrors.dropped(error)
    }

    /// The transfer coding besides chunked that `response`'s body came in, to be undone
    /// (AsyncHTTPClient undoes only chunked).
    private static func transferCoding(of response: HTTPClientResponse) -> String? {
        TransferDecoding.coding(transferEncoding: response.headers["transfer-encoding"])
    }

    private static func head(of response: HTTPClientResponse) -> HTTPResponse {
        var fields = HTTPFields()
        fields.reserveCapacity(response.headers.count)
        for (name, value) in response.headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return HTTPResponse(status: .init(code: Int(response.status.code)), headerFields: fields)
    }

    static func classify(_ error: any Error, url: URL, receiving: Bool) -> OriginError {
        if let error = error as? TransferDecodingError {
            return OriginError(.invalidResponse, "\(url.absoluteString): \(error)", cause: error)
        }
        if let failed = error as? UploadChunks.BodyFailed {
            return OriginError.requestBodyFailed(failed.cause, url: url)
        }
        if let error = error as? HTTPClientError,
            [HTTPClientError.invalidURL, .emptyHost, .emptyScheme].contains(error)
        {
            return OriginError(.invalidRequest, "cannot send a request to \(url.absoluteString)", cause: error)
        }
        if let error = error as? HTTPClientError, error == .alreadyShutdown || error == .cancelled {
            // Not the origin's doing: no verdict on its reachability.
            return OriginError(
                .invalidRequest, "the request to \(url.absoluteString) was abandoned: the client is shutting down",
                cause: error)
        }
        if error is HTTPParserError {
            return OriginError(
                .invalidResponse, "\(url.absoluteString) sent a malformed response (\(error))", cause: error)
        }
        if error is NIOTooManyBytesError {
            return OriginError(.invalidResponse, "the body from \(url.absoluteString) is too large", cause: error)
        }
        if let reason = TLSFailure.reason(error) {
            // Never "unreachable": that would serve what is stored as if offline, and a
            // certificate that does not verify is not a network that is down.
            return OriginError(
                .invalidResponse, "\(url.host ?? url.absoluteString) failed TLS verification: \(reason)", cause: error)
        }
        if !receiving, let reason = connectionFailure(error) {
            return OriginError(
                .unreachable, "cannot connect to \(url.host ?? url.absoluteString): \(reason)", cause: error,
                connectionFailed: true)
        }
        // Timed out, reset, closed: no (complete) answer from the origin.
        return OriginError(
            .unreachable,
            receiving ? "\(url.absoluteString) stopped answering" : "no answer from \(url.host ?? url.absoluteString)",
            cause: error)
    }

    /// Why no connection could be made at all, in a few words; `nil` when `error` is not such
    /// a failure.
    static func connectionFailure(_ error: any Error) -> String? {
        if let error = error as? HTTPClientError { return error == .connectTimeout ? "the connection timed out" : nil }
        return ConnectionErrors.failure(error)
    }
}
