import Foundation
import Testing
import WebCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("WebCacheURLProtocol's one mapping from a failure to a URLError")
struct URLErrorMappingTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var error: any Error & Sendable
        var code: URLError.Code
        var testDescription: String { "\(error) → \(code.rawValue)" }
    }

    static let rows: [Row] = [
        Row(
            error: CacheError(.offlineMiss, "https://a.test/ is not cached and the origin is unreachable"),
            code: .notConnectedToInternet),
        Row(error: CacheError(.tooManyRedirects, "more than 10 redirects"), code: .httpTooManyRedirects),
        Row(error: CacheError(.invalidRequest, "ftp://a.test/ is not an http(s) URL"), code: .unsupportedURL),
        Row(
            error: CacheError(
                .originFailed, "fetching failed", cause: OriginError(.invalidResponse, "a.test failed TLS verification")
            ), code: .badServerResponse),
        Row(
            error: CacheError(.originFailed, "fetching failed", cause: CancellationError()),
            code: .cannotLoadFromNetwork),
        Row(error: OriginError(.unreachable, "cannot connect to a.test"), code: .notConnectedToInternet),
        Row(error: OriginError(.invalidResponse, "the body is too large"), code: .badServerResponse),
        Row(error: URLError(.timedOut), code: .timedOut),
        Row(error: CancellationError(), code: .cannotLoadFromNetwork),
    ]

    @Test("code and description", arguments: rows)
    func mapping(_ row: Row) {
        let mapped = WebCacheURLProtocol.urlError(for: row.error)
        #expect(mapped.code == row.code)
        if !(row.error is URLError) {
            #expect(mapped.localizedDescription == "\(row.error)", "the text says what went wrong")
        }
    }
}
