import HTTPCaching
import HTTPTypes
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import WebCache

/// Passes the origin's interim responses (`103 Early Hints`, `102 Processing`) to one client
/// while its request is on its way (RFC 9110 §15.2): in order, before the final response, never
/// to an HTTP/1.0 client, and never after ``close()`` — a revalidation in the background that
/// meets a 103 does not write into the connection, and never to a client that is not reading
/// (its connection not writable): they are dropped rather than held. `100 Continue` is not
/// passed on: the proxy answers `Expect` itself and sends the body whole.
final class InterimForwarding: Sendable {
    private let channel: any Channel
    private let open = NIOLockedValueBox(true)

    init(channel: any Channel) {
        self.channel = channel
    }

    /// Whether a client speaking `version` may get interim responses.
    static func accepts(_ version: HTTPVersion) -> Bool {
        version.major > 1 || (version.major == 1 && version.minor >= 1)
    }

    /// The handler to give the engine for the request.
    var handler: InterimResponseHandler {
        { [self] response in forward(response) }
    }

    /// Writes `response` to the client, unless closed.
    func forward(_ response: HTTPResponse) {
        let code = response.status.code
        guard (102..<200).contains(code), open.withLockedValue({ $0 }) else { return }
        var head = ByteBuffer()
        head.writeString(
            "HTTP/1.1 \(code) \(response.status.reasonPhrase.isEmpty ? Self.reasonPhrase(code) : response.status.reasonPhrase)\r\n"
        )
        for field in MessageFields.removingHopByHop(response.headerFields) {
            head.writeString("\(field.name.rawName): \(field.value)\r\n")
        }
        head.writeStaticString("\r\n")
        let bytes = head
        let channel = self.channel
        let open = self.open
        channel.eventLoop.execute {
            // Not to a client that has stopped reading (its writes past the high watermark): an
            // origin may send any number of interim responses, and they would pile up in memory
            // (100,000 hints of 1 KB took a proxy from 45 to 278 MB). They are hints; the final
            // response is written whatever the watermark, as ever.
            guard open.withLockedValue({ $0 }), channel.isWritable else { return }
            channel.writeAndFlush(bytes, promise: nil)
        }
    }

    /// The usual phrase for an interim status the origin sent without one.
    static func reasonPhrase(_ code: Int) -> String {
        switch code {
        case 102: "Processing"
        case 103: "Early Hints"
        default: HTTPResponseStatus(statusCode: code).reasonPhrase
        }
    }

    /// No interim response goes out after this: the final response is next.
    func close() {
        open.withLockedValue { $0 = false }
    }
}
