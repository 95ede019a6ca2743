import Foundation
import HTTPTypes
import NIOConcurrencyHelpers
import WebCache

/// An origin without a socket: `answer` makes each response at once, and every request is
/// counted by path. For tests and fuzzing of what sits in front of the engine, where a real
/// origin would only add time.
public final class InMemoryOrigin: OriginFetching {
    private let answer: @Sendable (HTTPRequest) -> OriginResponse
    private let gate: OriginGate?
    /// Where a streamed body stops until its gate opens.
    private let heldBody: (after: Int, gate: OriginGate)?
    private let paths = NIOLockedValueBox([String: Int]())
    private let received = NIOLockedValueBox([String]())

    /// An origin answering with `answer`, each answer held back until `gate` (if any) opens.
    public init(gate: OriginGate? = nil, answer: @escaping @Sendable (HTTPRequest) -> OriginResponse) {
        self.gate = gate
        self.heldBody = nil
        self.answer = answer
    }

    /// An origin answering with `answer` as a stream: the head and the first `after` bytes of
    /// the body at once, the rest once `gate` opens (a body still arriving).
    public init(
        holdingBodyAfter after: Int, until gate: OriginGate,
        answer: @escaping @Sendable (HTTPRequest) -> OriginResponse
    ) {
        self.gate = nil
        self.heldBody = (after, gate)
        self.answer = answer
    }

    /// An origin whose every answer is `200` with `Cache-Control: max-age=60` and a short body
    /// naming the path; a path starting `/no-store`, `/private` or `/no-cache` gets that
    /// directive instead, and `/missing` a cacheable 404. Answers wait for `gate`, if given.
    public static func cacheable(gate: OriginGate? = nil) -> InMemoryOrigin {
        InMemoryOrigin(gate: gate) { request in
            let path = request.path ?? "/"
            let control =
                path.hasPrefix("/no-store")
                ? "no-store"
                : path.hasPrefix("/private")
                    ? "private, max-age=60"
                    : path.hasPrefix("/no-cache") ? "no-cache" : "max-age=60"
            var fields = HTTPFields()
            fields[.cacheControl] = control
            fields[.contentType] = "text/plain"
            let status: HTTPResponse.Status = path.hasPrefix("/missing") ? .notFound : .ok
            return OriginResponse(
                head: HTTPResponse(status: status, headerFields: fields), body: Data("body of \(path)".utf8))
        }
    }

    /// An origin answering every request `200` with `body` and the fields `headers` (a stored
    /// object: a video with its `ETag`, say).
    public static func serving(_ body: Data, headers: [(String, String)]) -> InMemoryOrigin {
        var fields = HTTPFields()
        for (name, value) in headers { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        let head = HTTPResponse(status: .ok, headerFields: fields)
        return InMemoryOrigin { _ in OriginResponse(head: head, body: body) }
    }

    /// How many requests for `path` (the request target's path, with its query) came.
    public func count(_ path: String) -> Int {
        paths.withLockedValue { $0[path, default: 0] }
    }

    /// How many requests came in all.
    public var total: Int {
        paths.withLockedValue { $0.values.reduce(0, +) }
    }

    /// The methods of the requests that came, in order.
    public var methods: [String] {
        received.withLockedValue { $0 }
    }

    /// Counts the request and answers it (once the gate, if any, is open).
    public func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
        paths.withLockedValue { $0[request.path ?? "/", default: 0] += 1 }
        received.withLockedValue { $0.append(request.method.rawValue) }
        try await gate?.pass()
        return answer(request)
    }

    /// The answer as a stream: whole at once, or held part-way (``init(holdingBodyAfter:until:answer:)``).
    public func stream(_ request: HTTPRequest, body: Data?) async throws -> OriginStream {
        let response = try await fetch(request, body: body)
        guard let (after, gate) = heldBody else { return OriginStream(response) }
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.yield(response.body.prefix(after))
        Task {
            do {
                try await gate.pass()
                continuation.yield(response.body.dropFirst(after))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return OriginStream(head: response.head, body: stream)
    }
}
