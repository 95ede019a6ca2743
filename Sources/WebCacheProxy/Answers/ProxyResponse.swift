import HTTPCaching
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOPosix
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response on its way to the client.
package struct ProxyResponse: Sendable {
    package var head: HTTPResponse
    var body: Body

    /// Where the body is: one of three, never a mix.
    enum Body: Sendable {
        /// Whole, in memory (empty for HEAD, 304 and the like).
        case whole(Data)
        /// Still arriving from the origin.
        case arriving(ResponseBodyStream)
        /// A stored body sent straight from its file (`sendfile`).
        case file(StoredBodyFile)

        /// The engine's stream as a body: whole when it is already whole.
        init(_ stream: ResponseBodyStream) {
            self = stream.completeBody.map { .whole($0) } ?? .arriving(stream)
        }

        /// Whether the body can be written in one go (it is not still arriving).
        var isWhole: Bool {
            if case .arriving = self { return false }
            return true
        }
    }

    static func error(_ status: Int, _ message: String) -> ProxyResponse {
        var head = HTTPResponse(status: .init(code: status))
        head.headerFields[.contentType] = "text/plain; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        return ProxyResponse(head: head, body: .whole(Data((message + "\n").utf8)))
    }
}

/// A stored body to send from its file: the store's open file, shared with other answers and
/// kept open while this holds it.
struct StoredBodyFile: Sendable {
    /// Bodies this large or larger are sent from their files; smaller ones are copied from
    /// memory, which costs less than sending a file.
    static let minimumSize = 64 << 10

    let file: OpenedBodyFile
    /// Bytes sent: from ``offset`` on (a range of the body for a 206).
    var size: Int
    var offset = 0

    init(_ opened: OpenedBodyFile) {
        file = opened
        size = opened.size
    }

    /// A handle of its own for one write: SwiftNIO lets one thread at a time use a handle, and
    /// the same file goes out on several event loops at once. Give it back with
    /// ``release(_:)`` once written; the file stays open while this value lives.
    func borrowHandle() -> NIOFileHandle {
        NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: file.descriptor)
    }

    /// Ends a handle from ``borrowHandle()`` without closing the file.
    func release(_ handle: NIOFileHandle) {
        _ = try? handle.takeDescriptorOwnership()
    }
}

/// A whole answer as it goes on the wire: one of three.
enum EncodedAnswer: Sendable {
    /// Head and body, in memory.
    case bytes(ByteBuffer)
    /// The head, then bytes of a stored body from its file.
    case headThenFile(ByteBuffer, StoredBodyFile)
    /// Head and body in one file (a replayed answer, ``WireFile``).
    case wholeFile(WireFile)
}
