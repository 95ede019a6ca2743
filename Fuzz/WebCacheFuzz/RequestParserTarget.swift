import HTTPWire
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// The proxy's request parser beside SwiftNIO's (llhttp) on the same bytes: whatever requests
/// the proxy's parser reads whole, SwiftNIO's reads the same — method, target, version, fields
/// (values without the whitespace after them, which RFC 9110 §5.5 leaves out and llhttp
/// keeps) and body. It may refuse what SwiftNIO takes, never take what SwiftNIO refuses: two
/// parsers that disagree about where a request ends are how requests are smuggled. The first
/// byte of an input sets the size of the reads the bytes come in (1 to 64, or all at once), so
/// that the parser's resumption between reads is fuzzed too.
enum RequestParserTarget {
    /// A request as a parser read it.
    private struct Request: Equatable {
        var head: String
        var body: [UInt8] = []
        var ended = false
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let control = input.first else { return }
        let bytes = Array(input.dropFirst())
        let readSize = control >= 64 ? max(1, bytes.count) : Int(control) + 1
        let ours = parsedByProxy(bytes, readSize: readSize).filter(\.ended)
        let reference = parsedBySwiftNIO(bytes).filter(\.ended)
        precondition(
            ours.count <= reference.count && Array(reference.prefix(ours.count)) == ours,
            "the proxy read \(ours) where SwiftNIO read \(reference) in \(printable(bytes))")
    }

    private static func parsedByProxy(_ bytes: [UInt8], readSize: Int) -> [Request] {
        var parser = RequestParser(limits: .init(headSize: 32 << 10))
        var requests: [Request] = []
        var offset = 0
        do {
            repeat {
                let end = min(bytes.count, offset + readSize)
                parser.append(ByteBuffer(bytes: bytes[offset..<end]))
                while let part = try parser.next() {
                    switch part {
                    case .head(let head):
                        let fields = head.fieldPairs.map { "\($0.name): \($0.value)" }
                        requests.append(Request(head: describe(head.method, head.uri, head.version, fields)))
                    case .body(let chunk): requests[requests.count - 1].body += chunk.readableBytesView
                    case .end: requests[requests.count - 1].ended = true
                    }
                }
                offset = end
            } while offset < bytes.count
        } catch {
            // Refused: the requests before the refusal stand.
        }
        return requests
    }

    private static func parsedBySwiftNIO(_ bytes: [UInt8]) -> [Request] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        defer { _ = try? channel.finish() }
        _ = try? channel.writeInbound(ByteBuffer(bytes: bytes))
        var requests: [Request] = []
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            switch part {
            case .head(let head):
                let fields = head.headers.map { "\($0.name): \(trimmingTrailingWhitespace($0.value))" }
                requests.append(Request(head: describe(head.method, head.uri, head.version, fields)))
            case .body(let chunk): requests[requests.count - 1].body += chunk.readableBytesView
            case .end: requests[requests.count - 1].ended = true
            }
        }
        return requests
    }

    private static func describe(_ method: HTTPMethod, _ uri: String, _ version: HTTPVersion, _ fields: [String])
        -> String
    {
        "\(method.rawValue) \(uri) HTTP/\(version.major).\(version.minor) \(fields)"
    }

    private static func trimmingTrailingWhitespace(_ value: String) -> String {
        var value = Substring(value)
        while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
        return String(value)
    }

    private static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.prefix(400), as: UTF8.self).debugDescription
    }
}
