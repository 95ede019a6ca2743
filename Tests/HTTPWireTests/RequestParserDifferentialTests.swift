import Foundation
import NIOCore
import Testing
import WebCacheTestSupport

@testable import HTTPWire

/// The proxy's request parser against SwiftNIO's (llhttp), on thousands of requests with bytes
/// changed, added and taken away: whatever the proxy's parser reads as whole requests,
/// SwiftNIO's reads the same way — the same requests, with the same fields and bodies. It may
/// refuse bytes SwiftNIO takes (it is stricter), never the other way round: two parsers that
/// disagree about where a request ends are how requests are smuggled.
@Suite("The request parser beside SwiftNIO's")
struct RequestParserDifferentialTests {
    static let seeds: [String] = [
        "GET /a?q=1 HTTP/1.1\r\nHost: shop.test\r\nAccept: */*\r\n\r\nGET /b HTTP/1.1\r\nHost: shop.test\r\n\r\n",
        "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: a\r\n\r\n",
        "POST /p HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;n=v\r\nhello\r\n10\r\n0123456789abcdef\r\n0\r\nT: x\r\n\r\nGET / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.0\r\nConnection: keep-alive\r\nX-A:  spaced value \t\r\n\r\nHEAD /h HTTP/1.1\r\nHost: a\r\n\r\n",
        "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n",
        "GET /s HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        "\r\nDELETE /d HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\nOPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
    ]

    /// Bytes that mean something to a parser, for mutations.
    static let interesting: [UInt8] = Array("\r\n \t:;,0aF\"-=/".utf8) + [0x00, 0x01, 0x7F, 0x80, 0xE9, 0x0B]

    /// How many changed requests, and the seed (`PARSER_DIFFERENTIAL=count:seed` runs longer).
    static let run: (count: Int, seed: UInt64) = {
        let setting = ProcessInfo.processInfo.environment["PARSER_DIFFERENTIAL"]?.split(separator: ":") ?? []
        return (setting.first.flatMap { Int($0) } ?? 20_000, setting.dropFirst().first.flatMap { UInt64($0) } ?? 0x5EED)
    }()

    @Test("what the proxy reads as requests, SwiftNIO reads the same (20,000 changed requests)")
    func neverMoreLenient() async {
        // Seconds of parsing, in the processor time other tests leave (inBackground).
        let (disagreement, stricter) = await inBackground { Self.compare(Self.run.count, seed: Self.run.seed) }
        #expect(disagreement == nil)
        // Most changes break both parsers alike, or neither; the stricter cases are the rules
        // above SwiftNIO's (HTTP/1.0 with Transfer-Encoding, whitespace before a chunk extension).
        #expect(stricter < Self.run.count / 10)
    }

    /// Parses `count` changed requests with both parsers: the first request the proxy's parser
    /// read otherwise than SwiftNIO's, if any, and how many it refused that SwiftNIO's took.
    static func compare(_ count: Int, seed: UInt64) -> (disagreement: String?, stricter: Int) {
        var random = SplitMix64(seed: seed)
        var stricter = 0
        for iteration in 0..<count {
            var bytes = Array(Self.seeds[iteration % Self.seeds.count].utf8)
            for _ in 0...Int(random.next() % 3) { Self.mutate(&bytes, with: &random) }
            let ours = RequestParser.parse(bytes)
            let reference = ReferenceParsing.parse(bytes, trimmingValues: true)
            let oursEnded = ours.requests.filter(\.ended)
            let referenceEnded = reference.requests.filter(\.ended)
            guard oursEnded.count <= referenceEnded.count,
                Array(referenceEnded.prefix(oursEnded.count)) == oursEnded
            else {
                return (
                    "\(String(decoding: bytes, as: UTF8.self).debugDescription): proxy \(ours), SwiftNIO \(reference)",
                    stricter
                )
            }
            if oursEnded.count < referenceEnded.count { stricter += 1 }
        }
        return (nil, stricter)
    }

    static func mutate(_ bytes: inout [UInt8], with random: inout SplitMix64) {
        guard !bytes.isEmpty else { return }
        let position = Int(random.next() % UInt64(bytes.count))
        let byte = interesting[Int(random.next() % UInt64(interesting.count))]
        switch random.next() % 4 {
        case 0: bytes[position] = byte
        case 1: bytes.insert(byte, at: position)
        case 2: bytes.remove(at: position)
        default:
            // A line again, after itself: duplicated fields, a second request line.
            let lineStart = bytes[..<position].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
            let lineEnd = bytes[position...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count
            bytes.insert(contentsOf: bytes[lineStart..<lineEnd], at: lineEnd)
        }
    }
}

/// A small deterministic random number generator, so that a failure repeats.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
