import ArgumentParser
import Dispatch
import Foundation
import HTTPCaching
import HTTPTypes
import Logging
import WebCache
import WebCacheProxy

/// `webcache proxy`: a caching HTTP proxy (shared-cache rules) for any browser engine.
struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxy",
        abstract: "Run a caching HTTP/1.1 proxy: reverse with --upstream, forward without.",
        discussion: """
            Reverse: webcache proxy --listen 127.0.0.1:8080 --upstream http://127.0.0.1:8000
            Forward: webcache proxy --listen 127.0.0.1:3128 --allow-destination 127.0.0.1
            The proxy listens on loopback unless --listen names another address. It uses \
            shared-cache rules: private responses are never stored. Stops on SIGINT/SIGTERM.
            """)

    @OptionGroup var cache: CacheOptions

    @Option(help: ArgumentHelp("Where to listen, HOST:PORT.", valueName: "address"))
    var listen: String = "127.0.0.1:8080"

    @Option(help: ArgumentHelp("Reverse mode: the origin every request goes to.", valueName: "url"))
    var upstream: String?

    @Option(help: ArgumentHelp("Forward mode: a destination host (or domain) allowed; repeatable. Without any, all are allowed.", valueName: "host"))
    var allowDestination: [String] = []

    @Option(help: ArgumentHelp("A targeted cache-control field obeyed over Cache-Control (RFC 9213).", valueName: "field"))
    var targetField: String = "CDN-Cache-Control"

    func validate() throws {
        _ = try address()
        if let upstream { _ = try parseURL(upstream) }
        guard HTTPField.Name(targetField) != nil else { throw ValidationError("'\(targetField)' is not a valid field name") }
    }

    func address() throws -> (host: String, port: Int) {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port) else {
            throw ValidationError("--listen needs HOST:PORT, not '\(listen)'")
        }
        return (String(listen[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port)
    }

    func run() async throws {
        try await reportingFailures {
            let (host, port) = try address()
            let origin = AsyncHTTPClientOrigin()
            let rules = CacheRules(kind: .shared, targetedFields: [HTTPField.Name(targetField)!])
            var logger = Logger(label: "webcache-proxy")
            logger.logLevel = .info
            let httpCache: HTTPCache
            do {
                httpCache = try HTTPCache(
                    configuration: .init(store: try cache.storeConfiguration(), rules: rules, policy: try cache.policy(), logger: CacheOptions.quietLogger),
                    origin: origin)
            } catch {
                try? await origin.shutdown()
                throw error
            }
            let proxy = CachingProxy(
                cache: httpCache,
                configuration: ProxyConfiguration(host: host, port: port, upstream: try upstream.map(parseURL), allowedDestinations: allowDestination),
                logger: logger)
            let serving = Task { try await proxy.run() }
            let signals = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
                signal(number, SIG_IGN)
                // Signal delivery needs a dispatch source; the work itself stays in Swift concurrency.
                let source = DispatchSource.makeSignalSource(signal: number)
                source.setEventHandler { serving.cancel() }
                source.resume()
                return source
            }
            let result = await serving.result
            signals.forEach { $0.cancel() }
            httpCache.persistCounters()
            try? await origin.shutdown()
            if case .failure(let error) = result, !(error is CancellationError) {
                throw CommandFailure(.unavailable, "the proxy stopped: \(error)")
            }
        }
    }
}
