import HTTPCaching
import HTTPTypes
import HTTPWire
import NIOCore
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an exchange hands over and reports (its head, its reporting, why it failed), and how a
/// parsed head becomes the engine's.
extension OriginExchangeHandler {
    /// Tells one exchange from the next on the same connection (a late resume or abandon of an
    /// exchange that is over does nothing).
    final class Mark: Sendable {}

    /// A response head, and whether its body had all arrived (the body stream finished) when it
    /// was handed over.
    struct ArrivedHead: Sendable {
        var response: HTTPResponse
        var bodyArrived: Bool
        /// The back-pressure of a body still on its way.
        var pacing: OriginBodyPacing?
    }

    /// What one exchange reports to, all on the connection's event loop.
    struct Exchange: Sendable {
        var head: EventLoopPromise<ArrivedHead>
        var body: AsyncThrowingStream<Data, any Error>.Continuation
        var interim: (@Sendable (HTTPResponse) -> Void)?
        var maximumBodySize: Int
        /// How long the head may take, and then each chunk of the body.
        var timeout: TimeAmount
        /// What an error ending the body is reported as.
        var bodyError: @Sendable (any Error) -> any Error
        /// Called once the exchange is over: `true` when the connection may be used again.
        var finished: @Sendable (_ reusable: Bool) -> Void
    }

    /// Why an exchange ended without a complete response.
    enum Failure: Error, CustomStringConvertible {
        /// The connection closed before the response head (a kept-alive connection the origin
        /// had closed: the request may be sent again on a new one).
        case closedBeforeHead
        case closedDuringBody(received: Int)
        case timedOut(receivingBody: Bool)
        case tooLarge(limit: Int)
        case switchingProtocols
        case abandoned

        var description: String {
            switch self {
            case .closedBeforeHead: "the connection closed before the response"
            case .closedDuringBody(let received): "the connection closed after \(received) body bytes"
            case .timedOut(let receivingBody): receivingBody ? "the body stopped arriving" : "no response in time"
            case .tooLarge(let limit): "the body is larger than \(limit) bytes"
            case .switchingProtocols: "the origin switched protocols (101), which a cache does not follow"
            case .abandoned: "nothing reads the rest of the body"
            }
        }
    }

    /// The values of the head's `Transfer-Encoding` fields.
    static func transferEncoding(of head: ResponseHead) -> [String] {
        guard head.framing == .chunked || head.framing == .untilClose else { return [] }
        return head.fields.compactMap { field in
            field.name.count == 17 && head.string(field.name).lowercased() == "transfer-encoding"
                ? head.string(field.value) : nil
        }
    }

    /// The head as HTTPTypes gives it to the engine, without the fields of this connection
    /// (RFC 9110 §7.6.1): hop-by-hop ones, which the exchange has used (keep-alive, framing), and
    /// those `Connection` lists. They never travel further, and a head without them is one the
    /// engine need not copy to remove them.
    static func response(_ head: ResponseHead) -> HTTPResponse {
        var fields = MessageFields.Gathering(capacity: head.fields.count)
        for field in head.fields {
            if let name = HTTPField.Name(head.string(field.name)) {
                fields.add(HTTPField(name: name, value: head.string(field.value)))
            }
        }
        return HTTPResponse(
            status: .init(code: head.status, reasonPhrase: head.string(head.reason)), headerFields: fields.fields())
    }
}
