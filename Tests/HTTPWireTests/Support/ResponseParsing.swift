import NIOCore
import NIOEmbedded
import NIOHTTP1

@testable import HTTPWire

/// A response as a parser saw it: its status line and fields, its body, whether it ended.
struct ParsedResponse: Equatable, CustomStringConvertible {
    var head: String
    var body: [UInt8] = []
    var ended = false

    var description: String { "\(head) body \(body.count) ended \(ended)" }

    init(status: Int, version: String, fields: [String]) {
        head = "HTTP/\(version) \(status) \(fields)"
    }
}

extension ResponseParser {
    /// What this parser makes of `bytes` (fed in reads of `readSize`), the origin closing the
    /// connection after them when `closed`; `toHEAD` for responses to HEAD.
    static func parse(_ bytes: [UInt8], readSize: Int? = nil, closed: Bool = true, toHEAD: Bool = false) -> (
        responses: [ParsedResponse], interim: [Int], error: (any Error)?
    ) {
        var parser = ResponseParser()
        parser.expectResponse(toHEAD: toHEAD)
        var responses: [ParsedResponse] = []
        var interim: [Int] = []
        func take(_ part: Part) {
            switch part {
            case .head(let head) where head.isInterim:
                interim.append(head.status)
            case .head(let head):
                responses.append(
                    ParsedResponse(
                        status: head.status, version: "\(head.version.major).\(head.version.minor)",
                        fields: head.fields.map { "\(head.string($0.name)): \(head.string($0.value))" }))
            case .body(let chunk):
                responses[responses.count - 1].body += chunk.readableBytesView
            case .end:
                responses[responses.count - 1].ended = true
            }
        }
        let size = max(1, readSize ?? bytes.count)
        var offset = 0
        do {
            repeat {
                let end = min(bytes.count, offset + size)
                parser.append(ByteBuffer(bytes: bytes[offset..<end]))
                while let part = try parser.next() { take(part) }
                offset = end
            } while offset < bytes.count
            if closed, let part = try parser.connectionClosed() { take(part) }
        } catch {
            return (responses, interim, error)
        }
        return (responses, interim, nil)
    }
}

/// What SwiftNIO's response decoder (llhttp) makes of the same bytes, the connection closed
/// after them: the reference the proxy's parser must never be more lenient than. The decoder
/// pairs responses with the requests written through its pipeline (it learns of HEAD from
/// them): eight GET requests go out first.
enum ReferenceResponseParsing {
    static func parse(_ bytes: [UInt8], trimmingValues: Bool = true) -> [ParsedResponse] {
        let channel = EmbeddedChannel()
        _ = try? channel.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
        _ = try? channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
        for _ in 0..<8 {
            _ = try? channel.writeOutbound(
                HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")))
            _ = try? channel.writeOutbound(HTTPClientRequestPart.end(nil))
        }
        var responses: [ParsedResponse] = []
        // An interim response is a head alone (SwiftNIO sends no end for it); a part that would
        // belong to no final response is left out.
        func drain() {
            while let part = try? channel.readInbound(as: HTTPClientResponsePart.self) {
                switch part {
                case .head(let head) where head.status.code < 200:
                    break
                case .body where responses.isEmpty:
                    break
                case .end where responses.isEmpty:
                    break
                case .head(let head):
                    responses.append(
                        ParsedResponse(
                            status: Int(head.status.code), version: "\(head.version.major).\(head.version.minor)",
                            fields: head.headers.map { "\($0.name): \(trimmingValues ? trim($0.value) : $0.value)" }))
                case .body(let chunk):
                    responses[responses.count - 1].body += chunk.readableBytesView
                case .end:
                    responses[responses.count - 1].ended = true
                }
            }
        }
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
        } catch {
            drain()
            return responses
        }
        drain()
        // The origin closes: a body delimited by the close ends.
        channel.pipeline.fireChannelInactive()
        drain()
        return responses
    }

    private static func trim(_ value: String) -> String {
        var value = Substring(value)
        while let last = value.last, last == " " || last == "\t" { value = value.dropLast() }
        return String(value)
    }
}
