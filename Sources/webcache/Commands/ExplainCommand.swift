import ArgumentParser
import Foundation
import HTTPTypes
import WebCache

/// `webcache explain`: what is stored and what the cache would do, without the network.
struct ExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Say what is stored for a URL and what the cache would do now, without the network.")

    @OptionGroup var cache: CacheOptions

    @Argument(help: "The URL.")
    var url: String

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value' (repeatable).")
    var headers: [HeaderLine] = []

    func validate() throws { _ = try parseURL(url) }

    func run() async throws {
        try await reportingFailures {
            let request = HTTPRequest(method: .get, url: try parseURL(url), headerFields: HeaderLine.fields(headers))
            let httpCache = try HTTPCache(
                configuration: .init(
                    store: try cache.storeConfiguration(), policy: try cache.policy(), logger: CacheOptions.quietLogger),
                origin: NoNetwork())
            for line in try httpCache.explain(request) { print(line) }
        }
    }
}

/// An origin that is never asked: `explain` works from the store alone.
struct NoNetwork: OriginFetching {
    func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
        throw OriginError(.unreachable, "explain never uses the network")
    }
}
