import Foundation
import HTTPTypes
import WebCache

/// An origin whose answers a test scripts: it refuses connections (like a closed port) or
/// answers, and counts every attempt.
public final class ScriptedOrigin: OriginFetching, @unchecked Sendable {
    /// Starts refusing.
    public init() {}

    /// What the next fetches do: refuse the connection, or answer 200 with this text.
    public enum Behaviour: Sendable {
        case refuse
        case answer(String, cacheControl: String)
    }
    private let lock = NSLock()
    private var behaviour = Behaviour.refuse
    private var attemptCount = 0

    /// Fetches tried so far.
    public var attempts: Int { lock.withLock { attemptCount } }
    /// Changes what the next fetches do.
    public func behave(_ next: Behaviour) { lock.withLock { behaviour = next } }

    /// Refuses or answers, as scripted, and counts the attempt.
    public func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
        let behaviour = lock.withLock { () -> Behaviour in
            attemptCount += 1
            return self.behaviour
        }
        switch behaviour {
        case .refuse:
            throw OriginError(
                .unreachable, "cannot connect to \(request.url?.host ?? "?"): connection refused",
                connectionFailed: true)
        case .answer(let text, let cacheControl):
            var head = HTTPResponse(status: .ok)
            head.headerFields[.cacheControl] = cacheControl
            head.headerFields[.eTag] = "\"\(text)\""
            return OriginResponse(head: head, body: Data(text.utf8))
        }
    }
}
