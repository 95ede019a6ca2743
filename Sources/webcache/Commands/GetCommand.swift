import ArgumentParser
import Foundation
import HTTPCaching
import HTTPTypes
import WebCache
import WebCacheAsyncHTTPClient

/// `webcache get`: fetch through the cache, like curl.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Fetch a URL through the cache and print the body.",
        discussion: """
            Exit status: 0 when an HTTP response was obtained (whatever its status), 64 for bad \
            arguments or configuration, 69 when the network failed and nothing usable was \
            cached (an offline miss), 73 when the cache directory cannot be used, 74 when the \
            body could not be written to standard output (quietly when its reader closed the \
            pipe, as head does).
            """)

    @OptionGroup var cache: CacheOptions
    @OptionGroup var network: NetworkOptions

    @Argument(help: "The URL to fetch.")
    var url: String

    @Flag(name: .shortAndLong, help: "Print the status line and headers (with Cache-Status) before the body.")
    var include = false

    @Option(
        help: ArgumentHelp(
            "How to use the cache: \(RequestMode.allCases.map(\.rawValue).joined(separator: ", ")).", valueName: "mode")
    )
    var mode: String = "default"

    @Option(name: [.customShort("H"), .customLong("header")], help: "A request header, 'Name: value' (repeatable).")
    var headers: [HeaderLine] = []

    @Option(name: [.customShort("X"), .customLong("request")], help: "The request method.")
    var method: String = "GET"

    @Option(name: [.customShort("d"), .customLong("data")], help: "A request body (implies POST unless -X is given).")
    var data: String?

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Follow redirects.")
    var followRedirects = false

    @Option(
        name: [.customShort("r"), .customLong("range")],
        help: ArgumentHelp("Only these bytes, as curl takes them: 0-99, 500-, -100, 0-0,10-19.", valueName: "range"))
    var range: String?

    @Option(
        help: ArgumentHelp(
            "The HTTP client that fetches from origins: asynchttpclient, or urlsession (the system's networking, as apps use it through URLSessionOrigin; on Linux, libcurl through Foundation), which takes neither --cacert nor --max-response-size.",
            valueName: "client"))
    var client: OriginClientChoice = .asynchttpclient

    /// The origin clients `get` can fetch with.
    enum OriginClientChoice: String, ExpressibleByArgument, CaseIterable {
        case asynchttpclient, urlsession
    }

    func validate() throws {
        if client == .urlsession && (!network.cacert.isEmpty || network.maxResponseSize != nil) {
            throw ValidationError(
                "--client urlsession uses the system's trust and takes any body size: drop --cacert and --max-response-size"
            )
        }
        _ = try parseURL(url)
        guard RequestMode(rawValue: mode) != nil else {
            throw ValidationError(
                "unknown mode '\(mode)'; use one of \(RequestMode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard HTTPRequest.Method(method) != nil else { throw ValidationError("'\(method)' is not a valid HTTP method") }
        if let range, ByteRangeRequest("bytes=" + range) == nil {
            throw ValidationError("'\(range)' is not a byte range (0-99, 500-, -100, or several separated by commas)")
        }
    }

    func run() async throws {
        // A reader that closes the pipe is an error of a write (EPIPE), which ends the command
        // after it has tidied up, not a signal that kills it wherever it is.
        signal(SIGPIPE, SIG_IGN)
        try await reportingFailures {
            let target = try parseURL(url)
            var requestMethod = HTTPRequest.Method(method)!
            if data != nil && method == "GET" { requestMethod = .post }
            var request = HTTPRequest(method: requestMethod, url: target, headerFields: HeaderLine.fields(headers))
            if let range { request.headerFields[.range] = "bytes=" + range }
            let policy = try network.applied(to: cache.policy())
            let storeConfiguration = try cache.storeConfiguration()
            let origin = try makeOrigin()
            let outcome: Result<Void, any Error>
            do {
                let httpCache = try HTTPCache(
                    configuration: .init(store: storeConfiguration, policy: policy, logger: CacheOptions.quietLogger),
                    origin: origin)
                do {
                    let response = try await httpCache.streamingResponse(
                        for: request, body: data.map { Data($0.utf8) }, mode: RequestMode(rawValue: mode)!,
                        followRedirects: followRedirects)
                    try await write(response)
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                // The answer is out; a background probe or refresh may still tell the store
                // whether the origin is back, within the network timeout.
                await httpCache.waitForBackgroundWork(
                    upTo: httpCache.configuration.networkTimeout(under: policy) ?? .seconds(5))
                httpCache.persistCounters()
            } catch {
                outcome = .failure(
                    CommandFailure(.cacheUnusable, "cannot open the cache at \(cache.directory.path): \(error)"))
            }
            try? await (origin as? AsyncHTTPClientOrigin)?.shutdown()
            _ = try outcome.get()
        }
    }

    /// The origin client `--client` names.
    private func makeOrigin() throws -> any OriginFetching {
        switch client {
        case .asynchttpclient:
            return AsyncHTTPClientOrigin(
                maximumBodySize: network.maxResponseSize ?? .max, trust: try network.trust(cache))
        case .urlsession:
            guard try cache.configuredCACertificates().isEmpty else {
                throw CommandFailure(
                    .usage, "--client urlsession uses the system's trust: the cacert of --config cannot apply to it")
            }
            return URLSessionOrigin()
        }
    }

    /// Writes the head (with `-i`) at once and the body as it arrives, as curl does: a large
    /// download is not held in memory, and a reader sees its first bytes at once.
    private func write(_ response: StreamingCacheResponse) async throws {
        if include {
            var head = "HTTP/1.1 \(response.head.status.code) \(response.head.status.reasonPhrase)\r\n"
            for field in response.head.headerFields { head += "\(field.name.rawName): \(field.value)\r\n" }
            try StandardStreams.writeOutput(Data((head + "\r\n").utf8))
        }
        var written = 0
        do {
            for try await chunk in response.body {
                try StandardStreams.writeOutput(chunk)
                written += chunk.count
            }
        } catch let failure as CommandFailure {
            throw failure
        } catch {
            throw CommandFailure(
                .unavailable, "\(response.url.absoluteString): the body ended after \(written) bytes: \(error)")
        }
    }
}
