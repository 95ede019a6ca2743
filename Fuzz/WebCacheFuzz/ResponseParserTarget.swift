import HTTPWire
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// The origin leg's response parser beside SwiftNIO's (llhttp) on the same bytes, the origin
/// closing the connection after them: whatever responses ours reads whole, SwiftNIO's reads the
/// same — status, version, fields (without the whitespace after values) and body. Where ours
/// refuses what follows a response, llhttp may have run that response's body on into it, so
/// there only its head and end must agree. The first byte of an input sets the size of the
/// reads (1 to 64, or all at once).
enum ResponseParserTarget {
    private struct Response: Equatable {
        var head: String
        var body: [UInt8] = []
        var ended = false
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let control = input.first else { return }
        let bytes = Array(input.dropFirst())
        let readSize = control >= 64 ? max(1, bytes.count) : Int(control) + 1
        let (parsed, refused) = parsedByOriginLeg(bytes, readSize: readSize)
        let ours = parsed.filter(\.ended)
        var reference = parsedBySwiftNIO(bytes).filter(\.ended)
        if refused, ours.count <= reference.count, let last = ours.last,
            reference[ours.count - 1].head == last.head, reference[ours.count - 1].body.starts(with: last.body)
        {
            reference[ours.count - 1].body = last.body
        }
        precondition(
            ours.count <= reference.count && Array(reference.prefix(ours.count)) == ours,
            "the origin leg read \(ours) where SwiftNIO read \(reference) in \(printable(bytes))")
    }

    private static func parsedByOriginLeg(_ bytes: [UInt8], readSize: Int) -> ([Response], refused: Bool) {
        var parser = ResponseParser()
        var responses: [Response] = []
        func take(_ part: ResponseParser.Part) {
            switch part {
            case .head(let head) where head.isInterim: break
            case .head(let head):
                let fields = head.fields.map { "\(head.string($0.name)): \(head.string($0.value))" }
                responses.append(
                    Response(head: "HTTP/\(head.version.major).\(head.version.minor) \(head.status) \(fields)"))
            case .body(let chunk): responses[responses.count - 1].body += chunk.readableBytesView
            case .end: responses[responses.count - 1].ended = true
            }
        }
        var offset = 0
        do {
            repeat {
                let end = min(bytes.count, offset + readSize)
                parser.append(ByteBuffer(bytes: bytes[offset..<end]))
                while let part = try parser.next() { take(part) }
                offset = end
            } while offset < bytes.count
            if let part = try parser.connectionClosed() { take(part) }
        } catch {
            return (responses, true)
        }
        return (responses, false)
    }

    private static func parsedBySwiftNIO(_ bytes: [UInt8]) -> [Response] {
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish() }
        _ = try? channel.pipeline.syncOperations.addHandler(HTTPRequestEncoder())
        _ = try? channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(
                HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
        for _ in 0..<8 {
            _ = try? channel.writeOutbound(
                HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")))
            _ = try? channel.writeOutbound(HTTPClientRequestPart.end(nil))
        }
        var responses: [Response] = []
        func drain() {
            while let part = try? channel.readInbound(as: HTTPClientResponsePart.self) {
                switch part {
                case .head(let head) where head.status.code < 200: break
                case .head(let head):
                    let fields = head.headers.map { "\($0.name): \(trimmingTrailingWhitespace($0.value))" }
                    responses.append(
                        Response(head: "HTTP/\(head.version.major).\(head.version.minor) \(head.status.code) \(fields)")
                    )
                case .body where responses.isEmpty: break
                case .end where responses.isEmpty: break
                case .body(let chunk): responses[responses.count - 1].body += chunk.readableBytesView
                case .end: responses[responses.count - 1].ended = true
                }
            }
        }
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            drain()
            channel.pipeline.fireChannelInactive()
        } catch {}
        drain()
        return responses
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
