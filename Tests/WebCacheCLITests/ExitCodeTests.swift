import Foundation
import Testing
import WebCache
import WebCacheProxy
import WebCacheStore

@testable import webcache

@Suite("The command line's one mapping from a failure to an exit code")
struct ExitCodeTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var error: any Error & Sendable
        var code: Int32?
        var testDescription: String { "\(error) → \(code.map(String.init) ?? "the parser's own")" }
    }

    static let rows: [Row] = [
        Row(error: PolicyError(.unreadableFile, "cannot read the configuration file /x.yaml"), code: 64),
        Row(error: PolicyError(.invalidConfiguration, "/x.yaml is not a valid WebCache configuration"), code: 64),
        Row(
            error: ProxyConfigurationError(.unsafeInterception, "listening beyond loopback needs --intercept-host"),
            code: 64),
        Row(error: CacheError(.invalidRequest, "ftp://a.test/ is not an http(s) URL"), code: 64),
        Row(error: CacheError(.offlineMiss, "https://a.test/ is not cached and the origin is unreachable"), code: 69),
        Row(error: CacheError(.originFailed, "fetching https://a.test/ failed"), code: 69),
        Row(error: CacheError(.tooManyRedirects, "redirect loop"), code: 69),
        Row(error: OriginError(.invalidRequest, "no URL"), code: 64),
        Row(error: OriginError(.unreachable, "explain never uses the network"), code: 69),
        Row(error: StoreError(.databaseFailure, "the index is not a database"), code: 73),
        Row(error: StoreError(.ioFailure, "the disk is full"), code: 73),
        Row(error: CommandFailure(.cacheUnusable, "cannot open the cache"), code: 73),
        Row(error: CommandFailure(.outputFailed, "cannot write to standard output: No space left on device"), code: 74),
        Row(error: CancellationError(), code: nil),
    ]

    @Test("exit code", arguments: rows)
    func mapping(_ row: Row) {
        #expect(ExitCodes.code(for: row.error)?.rawValue == row.code)
    }
}
