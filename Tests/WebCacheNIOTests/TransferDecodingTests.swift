import Foundation
import Testing
import WebCacheTestSupport

@testable import WebCacheNIO

/// `TransferDecoding`: the transfer codings besides chunked undone, whatever the pieces the body
/// comes in; bodies not valid in theirs refused; codings it does not know left as they came.
@Suite("Transfer codings undone")
struct TransferDecodingTests {
    struct Named: Sendable, CustomTestStringConvertible {
        var values: [String]
        var coding: String?
        var testDescription: String { "\(values) → \(coding ?? "nothing")" }
    }

    static let named: [Named] = [
        Named(values: [], coding: nil),
        Named(values: ["chunked"], coding: nil),
        Named(values: ["identity, chunked"], coding: nil),
        Named(values: ["gzip, chunked"], coding: "gzip"),
        Named(values: ["GZip ,Chunked"], coding: "gzip"),
        Named(values: ["x-gzip", "chunked"], coding: "x-gzip"),
        Named(values: ["deflate;q=1, chunked"], coding: "deflate"),
        Named(values: ["gzip"], coding: "gzip"),
        // Left as they came: codings it does not know, and more than one.
        Named(values: ["compress, chunked"], coding: nil),
        Named(values: ["br, chunked"], coding: nil),
        Named(values: ["Transfer-Encod"], coding: nil),
        Named(values: ["gzip, gzip, chunked"], coding: nil),
        Named(values: ["gzip", "deflate, chunked"], coding: nil),
        Named(values: ["gzip, foo, chunked"], coding: nil),
    ]

    @Test("the coding to undo, from the field's values", arguments: named)
    func codingNamed(_ row: Named) throws {
        #expect(TransferDecoding.coding(transferEncoding: row.values) == row.coding)
    }

    static let content = Fixtures.bytes(200_000) { UInt8(truncatingIfNeeded: ($0 * 7) ^ ($0 >> 5)) }

    /// `coded` fed to a decoder for `coding` in pieces of `piece` bytes: the content, and
    /// whether the decoder found it complete.
    static func decode(_ coded: Data, coding: String, piece: Int, limit: Int = .max) throws -> Data {
        let decoding = try TransferDecoding(coding: coding, limit: limit)
        var content = Data()
        for start in stride(from: 0, to: coded.count, by: piece) {
            let slice = coded[start..<min(start + piece, coded.count)]
            content += try slice.withUnsafeBytes { try decoding.decode($0) }
        }
        try decoding.finish()
        return content
    }

    @Test(
        "gzip, x-gzip and deflate (zlib) bodies come out whole, in pieces of any size",
        arguments: [1, 7, 4096, 1 << 20])
    func decodes(_ piece: Int) throws {
        let gzip = Deflated.compressed(Self.content, format: .gzip)
        let zlib = Deflated.compressed(Self.content, format: .zlib)
        #expect(try Self.decode(gzip, coding: "gzip", piece: piece) == Self.content)
        #expect(try Self.decode(gzip, coding: "x-gzip", piece: piece) == Self.content)
        #expect(try Self.decode(zlib, coding: "deflate", piece: piece) == Self.content)
    }

    @Test("gzip members one after another are one body")
    func members() throws {
        let first = Data("first member, ".utf8)
        let second = Data("second member".utf8)
        let coded = Deflated.compressed(first) + Deflated.compressed(second)
        #expect(try Self.decode(coded, coding: "gzip", piece: 5) == first + second)
    }

    @Test("an empty body is empty content")
    func empty() throws {
        #expect(try Self.decode(Data(), coding: "gzip", piece: 1).isEmpty)
    }

    @Test("a body not valid in its coding, cut off, or with bytes after a deflate stream is refused")
    func invalid() throws {
        let gzip = Deflated.compressed(Self.content)
        var corrupt = gzip
        corrupt[20] ^= 0xFF
        corrupt[21] ^= 0xFF
        #expect(throws: TransferDecodingError.self) { try Self.decode(corrupt, coding: "gzip", piece: 4096) }
        #expect(throws: TransferDecodingError.self) {
            try Self.decode(Data("plain text".utf8), coding: "gzip", piece: 4096)
        }
        #expect {
            try Self.decode(gzip.prefix(gzip.count / 2), coding: "gzip", piece: 4096)
        } throws: { error in
            "\(error)".contains("cut off")
        }
        let zlib = Deflated.compressed(Self.content, format: .zlib) + Data("more".utf8)
        #expect(throws: TransferDecodingError.self) { try Self.decode(zlib, coding: "deflate", piece: 4096) }
    }

    @Test("content past the limit is refused as it is decoded, however small the coded body")
    func limit() throws {
        let bomb = Deflated.compressed(Data(count: 20_000_000))
        #expect(bomb.count < 100_000)
        #expect {
            try Self.decode(bomb, coding: "gzip", piece: 4096, limit: 1_000_000)
        } throws: { error in
            "\(error)".contains("larger than 1000000 bytes")
        }
    }
}
