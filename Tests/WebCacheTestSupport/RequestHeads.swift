import HTTPWire
import NIOCore

extension RequestHead {
    /// The head of `text`, which must hold a request, parsed as the proxy parses what a client
    /// sends (``RequestParser``).
    package static func parsing(_ text: String) throws -> RequestHead {
        var parser = RequestParser(limits: .init(headSize: 32 << 10))
        parser.append(ByteBuffer(string: text))
        while let part = try parser.next() {
            if case .head(let head) = part { return head }
        }
        throw HTTPParseError.malformed("no head in \(text.debugDescription)")
    }
}
