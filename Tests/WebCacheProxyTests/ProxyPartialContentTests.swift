import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

@Suite("Stored parts through the proxy's connection handling")
struct ProxyPartialContentTests {
    static let body = Data((0..<100).map { UInt8(ascii: "a") + UInt8($0 % 26) })

    /// An origin that answers one range per request, with a strong `ETag`.
    static func rangedOrigin() -> InMemoryOrigin {
        InMemoryOrigin { request in
            var fields = HTTPFields()
            fields[.cacheControl] = "max-age=600"
            fields[.eTag] = "\"p1\""
            fields[.contentType] = "application/octet-stream"
            guard let piece = rangedPiece(of: body, for: request.headerFields[.range]) else {
                return OriginResponse(head: HTTPResponse(status: .ok, headerFields: fields), body: body)
            }
            fields[.contentRange] = piece.contentRange
            return OriginResponse(
                head: HTTPResponse(status: .partialContent, headerFields: fields), body: body.subdata(in: piece.range))
        }
    }

    @Test("a stored part answers ranges within it on the wire; a full GET fetches only the rest and is answered whole")
    func partsOnTheWire() async throws {
        try await SocketlessProxy.with(origin: Self.rangedOrigin()) { server in
            let connection = try await server.connect()
            try await connection.send("GET /p HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n\r\n")
            _ = try await connection.responses(1)
            await server.cache.waitForBackgroundWork()
            try await connection.send("GET /p HTTP/1.1\r\nHost: x\r\nRange: bytes=2-5\r\n\r\n")
            let inside = try await connection.responses(2).responses
            let hit = try #require(inside.last)
            #expect(
                hit.status == 206 && hit.field("Content-Range") == "bytes 2-5/100"
                    && hit.body == Array(Self.body[2..<6]))
            #expect(hit.field("Cache-Status")?.contains("hit") == true)
            #expect(server.origin.total == 1)

            try await connection.send("GET /p HTTP/1.1\r\nHost: x\r\n\r\n")
            let whole = try #require(try await connection.responses(3).responses.last)
            #expect(whole.status == 200 && whole.body == Array(Self.body) && whole.field("Content-Range") == nil)
            #expect(whole.field("Cache-Status")?.contains("fwd=partial") == true)
            #expect(server.origin.total == 2)
            await server.cache.waitForBackgroundWork()
            try await connection.send("GET /p HTTP/1.1\r\nHost: x\r\nRange: bytes=90-\r\n\r\n")
            let tail = try #require(try await connection.responses(4).responses.last)
            #expect(
                tail.status == 206 && tail.body == Array(Self.body[90...])
                    && tail.field("Cache-Status")?.contains("hit") == true)
            #expect(server.origin.total == 2)
            await connection.close()
        }
    }
}
