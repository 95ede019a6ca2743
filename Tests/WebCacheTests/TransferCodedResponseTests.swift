import Foundation
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

/// Both SwiftNIO origins against a raw origin on 127.0.0.1 that sends its body in a transfer
/// coding besides chunked: the content comes out decoded, a body not valid in its coding fails
/// the exchange rather than pass coded bytes on as content, and a coding neither knows is left
/// as it came.
@Suite("Origins: responses in a transfer coding", .serialized)
struct TransferCodedResponseTests {
    static let content = Fixtures.bytes(300_000) { UInt8(truncatingIfNeeded: ($0 * 11) ^ ($0 >> 7)) }

    /// A whole response whose body is `coded`, sent chunked in pieces of 16 KiB under
    /// `Transfer-Encoding: <coding>, chunked`.
    static func response(coding: String, coded: Data) -> [UInt8] {
        var bytes = Array(
            "HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nTransfer-Encoding: \(coding), chunked\r\nConnection: close\r\n\r\n"
                .utf8)
        for start in stride(from: 0, to: coded.count, by: 16_384) {
            let piece = coded[start..<min(start + 16_384, coded.count)]
            bytes += Array("\(String(piece.count, radix: 16))\r\n".utf8) + piece + Array("\r\n".utf8)
        }
        return bytes + Array("0\r\n\r\n".utf8)
    }

    /// What `kind` gets from an origin answering `response` to a GET of `/coded`.
    static func fetch(_ kind: StreamedUploadTests.Client, answering response: [UInt8]) async throws -> OriginResponse {
        let origin = EarlyAnswerOrigin(answerAfter: 1, responseBytes: response)
        try await origin.start()
        let (client, shutdown) = try kind.make()
        let result: Result<OriginResponse, any Error>
        do {
            result = .success(
                try await client.stream(Fixtures.request(.get, origin.url("/coded").absoluteString), body: nil)
                    .collected())
        } catch {
            result = .failure(error)
        }
        try await shutdown()
        try await origin.stop()
        return try result.get()
    }

    @Test(
        "a gzip or deflate transfer coding is undone: the content comes out, not the coded bytes",
        arguments: StreamedUploadTests.Client.allCases)
    func decoded(_ kind: StreamedUploadTests.Client) async throws {
        for (coding, format) in [("gzip", Deflated.Format.gzip), ("deflate", .zlib)] {
            let coded = Deflated.compressed(Self.content, format: format)
            let response = try await Self.fetch(kind, answering: Self.response(coding: coding, coded: coded))
            #expect(response.head.status == .ok)
            #expect(byteDifference(response.body, Self.content) == nil, "\(coding)")
        }
    }

    @Test("a coding neither origin knows is left as it came", arguments: StreamedUploadTests.Client.allCases)
    func unknownLeftAlone(_ kind: StreamedUploadTests.Client) async throws {
        let response = try await Self.fetch(kind, answering: Self.response(coding: "x-own", coded: Self.content))
        #expect(byteDifference(response.body, Self.content) == nil)
    }

    @Test(
        "a body not valid in its coding, or cut off inside it, fails as an unusable response",
        arguments: StreamedUploadTests.Client.allCases)
    func refused(_ kind: StreamedUploadTests.Client) async throws {
        let coded = Deflated.compressed(Self.content)
        for response in [
            Self.response(coding: "gzip", coded: Data("not gzip at all".utf8)),
            Self.response(coding: "gzip", coded: coded.prefix(coded.count / 2)),
        ] {
            let error = await #expect(throws: OriginError.self) {
                _ = try await Self.fetch(kind, answering: response)
            }
            #expect(error?.code == .invalidResponse, "\(String(describing: error))")
            #expect(error?.message.contains("transfer coding") == true, "\(String(describing: error))")
        }
    }
}
