import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import HTTPWire

/// A request as a parser saw it, for comparing two parsers: its head, its body, and whether
/// its end came.
struct ParsedRequest: Equatable, CustomStringConvertible {
    var method: String
    var uri: String
    var version: String
    var fields: [String]
    var body: [UInt8]
    var ended: Bool

    var description: String { "\(method) \(uri) HTTP/\(version) \(fields) body \(body.count) ended \(ended)" }
}

/// What a parser made of some bytes: the requests it returned, and the error it stopped on.
struct ParsedBytes: CustomStringConvertible {
    var requests: [ParsedRequest] = []
    var error: (any Error)?

    var description: String { "\(requests)\(error.map { " then \($0)" } ?? "")" }
}

extension RequestParser {
    /// A parser with the proxy's default limits.
    static func standard(headSize: Int = 32 << 10) -> RequestParser {
        RequestParser(limits: Limits(headSize: headSize))
    }

    /// Every part of `bytes`, fed in reads of `readSize` bytes (all at once by default).
    static func parts(of bytes: [UInt8], readSize: Int? = nil, headSize: Int = 32 << 10) throws -> [Part] {
        var parser = standard(headSize: headSize)
        var parts: [Part] = []
        let size = max(1, readSize ?? bytes.count)
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + size)
            parser.append(ByteBuffer(bytes: bytes[offset..<end]))
            while let part = try parser.next() { parts.append(part) }
            offset = end
        } while offset < bytes.count
        return parts
    }

    /// What this parser makes of `bytes` (fed in reads of `readSize`).
    static func parse(_ bytes: [UInt8], readSize: Int? = nil) -> ParsedBytes {
        var result = ParsedBytes()
        var parser = standard()
        let size = max(1, readSize ?? bytes.count)
        var offset = 0
        do {
            repeat {
                let end = min(bytes.count, offset + size)
                parser.append(ByteBuffer(bytes: bytes[offset..<end]))
                while let part = try parser.next() {
                    switch part {
                    case .head(let head):
                        result.requests.append(
                            ParsedRequest(
                                method: head.method.rawValue, uri: head.uri,
                                version: "\(head.version.major).\(head.version.minor)",
                                fields: head.fieldPairs.map { "\($0.name): \($0.value)" }, body: [], ended: false))
                    case .body(let chunk):
                        result.requests[result.requests.count - 1].body += chunk.readableBytesView
                    case .end:
                        result.requests[result.requests.count - 1].ended = true
                    }
                }
                offset = end
            } while offset < bytes.count
        } catch {
            result.error = error
        }
        return result
    }
}

/// What SwiftNIO's request decoder (llhttp) makes of the same bytes: the reference the proxy's
/// parser must never be more lenient than.
enum ReferenceParsing {
    static func parse(_ bytes: [UInt8], trimmingValues: Bool = false) -> ParsedBytes {
        var result = ParsedBytes()
        let trim = { (value: String) -> String in
            guard trimmingValues else { return value }
            var value = Substring(value)
            while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
            return String(value)
        }
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(HTTPRequestDecoder()))
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
        } catch {
            result.error = error
        }
        while let part = try? channel.readInbound(as: HTTPServerRequestPart.self) {
            switch part {
            case .head(let head):
                result.requests.append(
                    ParsedRequest(
                        method: head.method.rawValue, uri: head.uri,
                        version: "\(head.version.major).\(head.version.minor)",
                        fields: head.headers.map { "\($0.name): \(trim($0.value))" }, body: [], ended: false))
            case .body(let chunk):
                result.requests[result.requests.count - 1].body += chunk.readableBytesView
            case .end:
                result.requests[result.requests.count - 1].ended = true
            }
        }
        return result
    }
}
