import Foundation
import NIOCore
import Testing
import WebCacheTestSupport

@testable import HTTPWire

/// The origin leg's response parser against SwiftNIO's, on thousands of responses with bytes
/// changed, added and taken away: whatever responses ours reads whole, SwiftNIO's reads the same.
/// It may refuse what SwiftNIO takes, never the other way round.
@Suite("The response parser beside SwiftNIO's")
struct ResponseParserDifferentialTests {
    static let seeds: [String] = [
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nCache-Control: max-age=60\r\n\r\nhelloHTTP/1.1 304 Not Modified\r\nETag: \"a\"\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;n=v\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nT: x\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
        "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nxHTTP/1.0 404 Not Found\r\n\r\nuntil the close",
        "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-3/10\r\nContent-Length: 4\r\n\r\n0123",
        "HTTP/1.1 200\r\nX-A:  spaced \t\r\n\r\nbody until close",
    ]

    static let interesting: [UInt8] = Array("\r\n \t:;,0aF\"-=/1".utf8) + [0x00, 0x01, 0x7F, 0x80, 0xE9]

    /// How many changed responses, and the seed (`PARSER_DIFFERENTIAL=count:seed` runs longer).
    static let run: (count: Int, seed: UInt64) = {
        let setting = ProcessInfo.processInfo.environment["PARSER_DIFFERENTIAL"]?.split(separator: ":") ?? []
        return (setting.first.flatMap { Int($0) } ?? 20_000, setting.dropFirst().first.flatMap { UInt64($0) } ?? 0x5EED)
    }()

    @Test("what the origin leg reads as responses, SwiftNIO reads the same (20,000 changed responses)")
    func neverMoreLenient() async {
        // Seconds of parsing, in the processor time other tests leave (inBackground).
        let disagreement = await inBackground { Self.firstDisagreement(in: Self.run.count, seed: Self.run.seed) }
        #expect(disagreement == nil)
    }

    /// Parses `count` changed responses with both parsers: the first the origin leg read
    /// otherwise than SwiftNIO's, if any.
    static func firstDisagreement(in count: Int, seed: UInt64) -> String? {
        var random = SplitMix64(seed: seed)
        for iteration in 0..<count {
            var bytes = Array(Self.seeds[iteration % Self.seeds.count].utf8)
            for _ in 0...Int(random.next() % 3) { RequestParserDifferentialTests.mutate(&bytes, with: &random) }
            let parsed = ResponseParser.parse(bytes)
            let ours = parsed.responses.filter(\.ended)
            var reference = ReferenceResponseParsing.parse(bytes).filter(\.ended)
            // Where ours refused what follows a response (a status line llhttp took, such as
            // "004"), llhttp may have run that response's body on into it: its head and end
            // must agree, not its body, which ours has by its Content-Length.
            if parsed.error != nil, ours.count <= reference.count, let last = ours.last,
                reference[ours.count - 1].head == last.head,
                reference[ours.count - 1].body.starts(with: last.body)
            {
                reference[ours.count - 1].body = last.body
            }
            guard ours.count <= reference.count, Array(reference.prefix(ours.count)) == ours else {
                return "\(String(decoding: bytes, as: UTF8.self).debugDescription): ours \(ours), SwiftNIO \(reference)"
            }
        }
        return nil
    }
}
