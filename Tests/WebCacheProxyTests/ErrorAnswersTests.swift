import Foundation
import Testing
import WebCache

@testable import WebCacheProxy

@Suite("The proxy's one mapping from a failure to a status")
struct ErrorAnswersTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var error: any Error & Sendable
        var status: Int
        var testDescription: String { "\(error) → \(status)" }
    }

    static let rows: [Row] = [
        Row(
            error: CacheError(.offlineMiss, "https://a.test/ is not cached and the origin is unreachable"), status: 504),
        Row(error: CacheError(.invalidRequest, "ftp://a.test/ is not an http(s) URL"), status: 400),
        Row(
            error: CacheError(
                .originFailed, "fetching https://a.test/ failed", cause: OriginError(.invalidResponse, "broken")),
            status: 502),
        Row(
            error: CacheError(
                .originFailed, "POST https://a.test/up failed",
                cause: OriginError(.requestBodyTooLarge, "the request body is larger than 3000 bytes")),
            status: 413),
        Row(error: OriginError(.requestBodyTooLarge, "the request body is larger than 3000 bytes"), status: 413),
        Row(error: CacheError(.tooManyRedirects, "redirect loop at https://a.test/"), status: 502),
        Row(error: OriginError(.unreachable, "cannot connect to a.test", connectionFailed: true), status: 504),
        Row(error: OriginError(.invalidRequest, "no URL"), status: 400),
        Row(error: OriginError(.invalidResponse, "a.test sent a malformed response"), status: 502),
        Row(error: PolicyError(.invalidConfiguration, "storage.memoryCapacity must not be negative"), status: 500),
        Row(error: CancellationError(), status: 502),
    ]

    @Test("status and body", arguments: rows)
    func mapping(_ row: Row) {
        #expect(ErrorAnswers.status(for: row.error) == row.status)
        let response = ErrorAnswers.response(for: row.error)
        #expect(response.head.status.code == row.status)
        #expect(response.head.headerFields[.cacheControl] == "no-store")
        guard case .whole(let body) = response.body else {
            Issue.record("an error answer is whole")
            return
        }
        #expect(
            String(decoding: body, as: UTF8.self) == "\(row.error)\n", "the body says what went wrong, cause included")
    }
}
