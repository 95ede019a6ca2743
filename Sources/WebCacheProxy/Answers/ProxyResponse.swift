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
    var body: ResponseBodyStream
    /// A stored body sent straight from its file (`sendfile`) instead of ``body``.
    var file: StoredBodyFile?
    /// For a fresh answer from the store: the engine's terms for sending it again.
    var repeatable: RepeatableAnswer?

    static func error(_ status: Int, _ message: String) -> ProxyResponse {
        var head = HTTPResponse(status: .init(code: status))
        head.headerFields[.contentType] = "text/plain; charset=utf-8"
        head.headerFields[.cacheControl] = "no-store"
        return ProxyResponse(head: head, body: ResponseBodyStream(Data((message + "\n").utf8)))
    }
}

/// A stored body to send from its file: an open handle, closed once written.
struct StoredBodyFile: Sendable {
    /// Bodies this large or larger are sent from their files; smaller ones are copied from
    /// memory, which costs less than opening a file.
    static let minimumSize = 64 << 10

    var handle: NIOFileHandle
    /// Bytes sent: from ``offset`` on (a range of the body for a 206).
    var size: Int
    var offset = 0

    init(handle: NIOFileHandle, size: Int) {
        self.handle = handle
        self.size = size
    }

    /// A body file the engine opened; this takes over its descriptor.
    init(_ opened: OpenedBodyFile) {
        self.init(handle: NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: opened.descriptor), size: opened.size)
    }
}

/// A whole answer as it goes on the wire: the head, with the body unless that goes from a file;
/// or, for a repeated answer, one file holding both.
struct EncodedAnswer: Sendable {
    var bytes: ByteBuffer
    var file: StoredBodyFile? = nil
    /// Head and body together; when set, ``bytes`` and ``file`` are not sent.
    var wireFile: WireFile? = nil
}
