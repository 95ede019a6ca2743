import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response from the origin whose body is still arriving.
public struct OriginStream: Sendable {
    /// The response head.
    public var head: HTTPResponse
    /// The body, chunk by chunk; it throws ``OriginError`` when the origin stops half-way.
    public var body: AsyncThrowingStream<Data, any Error>
    /// Whether the whole body had arrived, and `body` was finished, when the head was handed
    /// over: reading `body` then never waits. A small response usually comes in the same read as
    /// its head; the cache then stores and answers it at once, without a task to carry the body.
    /// `false` when unknown.
    public var arrivedWhole: Bool
    /// How fast the body's reader takes it, for a client that reads from the network only as
    /// fast (``OriginBodyPacing``); `nil` for one that does not pause.
    public var pacing: OriginBodyPacing?

    /// Creates a response from a head and a body stream; `arrivedWhole` only when `body` is
    /// finished already (``arrivedWhole``); `pacing` when the client can pause its reads.
    public init(
        head: HTTPResponse, body: AsyncThrowingStream<Data, any Error>, arrivedWhole: Bool = false,
        pacing: OriginBodyPacing? = nil
    ) {
        self.head = head
        self.body = body
        self.arrivedWhole = arrivedWhole
        self.pacing = pacing
    }

    /// The response with its body collected, once the body has arrived whole.
    public func collected() async throws -> OriginResponse {
        var body = Data()
        for try await chunk in self.body { body.append(chunk) }
        return OriginResponse(head: head, body: body)
    }

    /// A response whose body is already complete.
    public init(_ response: OriginResponse) {
        self.head = response.head
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        if !response.body.isEmpty { continuation.yield(response.body) }
        continuation.finish()
        self.body = stream
        self.arrivedWhole = true
    }
}

extension OriginFetching {
    /// Collects the body: the default for origins that cannot stream.
    public func stream(_ request: HTTPRequest, body: Data?) async throws -> OriginStream {
        OriginStream(try await fetch(request, body: body))
    }

    /// Drops interim responses: for origins that do not see them.
    public func stream(_ request: HTTPRequest, body: Data?, interim: InterimResponseHandler?) async throws
        -> OriginStream
    {
        try await stream(request, body: body)
    }

    /// Collects the body, then sends the request: for origins that cannot send a body as it
    /// arrives.
    public func stream(_ request: HTTPRequest, streamingBody body: RequestBodyStream, interim: InterimResponseHandler?)
        async throws -> OriginStream
    {
        let collected: Data
        do {
            collected = try await body.collected()
        } catch {
            throw OriginError.requestBodyFailed(error, url: request.url)
        }
        return try await stream(request, body: collected, interim: interim)
    }
}
