import Foundation
import HTTPTypes
import WebCache
import WebCacheAsyncHTTPClient
import WebCacheProxy
import WebCacheStore
import WebCacheTestSupport

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Time to the offline answer (issue 13): a stored `no-cache` page whose origin went away, by the
/// engine, the command line (as a process) and the proxy; the origin refusing (its port closed)
/// and blackholed (connections accepted, nothing sent). "First" is the first request after the
/// origin went away, with nothing known about it; "following" the requests after it. Beside
/// them, how long a plain URLSession takes to report the refused connection, the earliest an
/// app without this cache could fall back to anything.
struct OfflineBenchmarks {
    var log: (String) -> Void
    /// The network timeout for the blackholed runs (short, to keep the run short; the default
    /// is 5 s for the library and 3 s for the forward proxy).
    static let networkTimeout = Duration.milliseconds(500)
    static let samples = 7

    /// A cache directory holding a stale `no-cache` page from an origin on `port`, which is
    /// then closed (or blackholed by the caller).
    struct Setup {
        var directory: URL
        var url: URL
        /// The blackholed origin, when there is one: stop it to end the exchanges still waiting.
        var silent: SilentOrigin? = nil
    }

    func prepare(blackholed: Bool) async throws -> (Setup, SilentOrigin?) {
        let origin = TestOrigin()
        try await origin.start()
        origin.route("/page") { _ in
            .init(
                status: 200,
                headers: [("Cache-Control", "no-cache"), ("ETag", "\"p\""), ("Content-Type", "text/html")],
                body: BenchFixtures.body(16 << 10))
        }
        let directory = BenchFixtures.temporaryDirectory("offline")
        let network = AsyncHTTPClientOrigin()
        let cache = try HTTPCache(configuration: .init(directory: directory), origin: network)
        _ = try await cache.response(for: HTTPRequest(method: .get, url: origin.url("/page")))
        // In the index before another cache opens the directory: the response ends once its row
        // is on its way, and only this store waits for rows on their way.
        await cache.store.entryOnItsWayWritten(try requireBench(CacheKey(url: origin.url("/page"))))
        try await network.shutdown()
        try await origin.stop()
        guard blackholed else { return (Setup(directory: directory, url: origin.url("/page")), nil) }
        let silent = SilentOrigin()
        try await silent.start()
        let entry = try requireBench(try cache.store.lookup(requireBench(CacheKey(url: origin.url("/page")))).first)
        var stored = entry.stored
        stored.request = HTTPRequest(method: .get, url: silent.url("/page"))
        _ = try cache.store.store(NewEntry(stored: stored), body: try cache.store.readBody(entry))
        return (Setup(directory: directory, url: silent.url("/page"), silent: silent), silent)
    }

    func run() async throws -> [Measurement] {
        var results: [Measurement] = []
        for blackholed in [false, true] {
            let kind = blackholed ? "blackholed" : "refusing"
            log("offline: engine, origin \(kind)")
            results += try await engine(blackholed: blackholed)
            log("offline: webcache get as a process, origin \(kind)")
            results += try await commandLine(blackholed: blackholed)
            log("offline: proxy, origin \(kind)")
            results += try await proxy(blackholed: blackholed)
        }
        results.append(try await urlSessionRefused())
        return results
    }

    private func note(_ blackholed: Bool) -> String {
        blackholed ? "network timeout \(Self.networkTimeout)" : "port closed"
    }

    /// Runs `sitting` on a new setup ``samples`` times; each returns the first request's time
    /// and the following ones'. Medians as two rows named `front door: first …`, `… following …`.
    private func measure(
        _ frontDoor: String, unit: String, blackholed: Bool, note extra: String = "",
        _ sitting: (Setup) async throws -> (first: Double, following: [Double])
    ) async throws -> [Measurement] {
        var firsts: [Double] = []
        var following: [Double] = []
        for _ in 0..<Self.samples {
            let (setup, silent) = try await prepare(blackholed: blackholed)
            defer { try? FileManager.default.removeItem(at: setup.directory) }
            let (first, rest) = try await sitting(setup)
            firsts.append(first)
            following += rest
            try await silent?.stop()
        }
        let group = "offline answer, origin \(blackholed ? "blackholed" : "refusing")"
        return [
            Measurement(
                group: group, name: "\(frontDoor): first \(unit)", webCache: Self.median(firsts),
                note: note(blackholed) + extra),
            Measurement(
                group: group, name: "\(frontDoor): following \(unit)s", webCache: Self.median(following),
                note: note(blackholed) + extra),
        ]
    }

    /// First and following requests through `HTTPCache`.
    private func engine(blackholed: Bool) async throws -> [Measurement] {
        try await measure("engine", unit: "request", blackholed: blackholed) { setup in
            let network = AsyncHTTPClientOrigin()
            var configuration = HTTPCache.Configuration(directory: setup.directory)
            configuration.networkTimeout = Self.networkTimeout
            let cache = try HTTPCache(configuration: configuration, origin: network)
            let request = HTTPRequest(method: .get, url: setup.url)
            let first = try await Self.time { _ = try await cache.response(for: request) }
            var following: [Double] = []
            for _ in 0..<20 { following.append(try await Self.time { _ = try await cache.response(for: request) }) }
            try await setup.silent?.stop()
            await cache.waitForBackgroundWork(upTo: .seconds(5))
            try await network.shutdown()
            return (first, following)
        }
    }

    /// `webcache get` as a process: the first run knows nothing of the origin; the following
    /// ones find it remembered in the store. Timed to the first byte of the answer.
    private func commandLine(blackholed: Bool) async throws -> [Measurement] {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("webcache")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            log(
                "offline: no webcache executable beside webcache-bench; build it (swift build -c release) to measure the command line"
            )
            return []
        }
        let timeout = String(
            Double(Self.networkTimeout.components.seconds) + Double(Self.networkTimeout.components.attoseconds) / 1e18)
        return try await measure("webcache get", unit: "run", blackholed: blackholed, note: "; process start included")
        { setup in
            let arguments = [
                "get", setup.url.absoluteString, "--cache-dir", setup.directory.path, "--network-timeout", timeout,
            ]
            let first = try Self.timeToFirstByte(executable, arguments)
            return (first, try (0..<3).map { _ in try Self.timeToFirstByte(executable, arguments) })
        }
    }

    /// A forward proxy (personal posture) on loopback, each request on a new connection
    /// (loopback connect and thread hand-off included: tens of microseconds).
    private func proxy(blackholed: Bool) async throws -> [Measurement] {
        try await measure("proxy", unit: "request", blackholed: blackholed) { setup in
            let network = AsyncHTTPClientOrigin()
            var configuration = HTTPCache.Configuration(directory: setup.directory, rules: .shared)
            configuration.offlinePosture = .personal
            configuration.networkTimeout = Self.networkTimeout
            let cache = try HTTPCache(configuration: configuration, origin: network)
            let proxy = CachingProxy(cache: cache, configuration: ProxyConfiguration(port: 0))
            let serving = Task { try await proxy.run() }
            var port: Int?
            for _ in 0..<200 where port == nil {
                port = proxy.port
                if port == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let proxyPort = try requireBench(port)
            let request =
                "GET \(setup.url.absoluteString) HTTP/1.1\r\nHost: \(setup.url.host!):\(setup.url.port!)\r\nConnection: close\r\n\r\n"
            @Sendable func get() async throws {
                let answer = try await RawHTTPClient.exchange(port: proxyPort, request)
                guard answer.hasPrefix("HTTP/1.1 200") else {
                    throw BenchFailure("the proxy answered \(answer.prefix(40))")
                }
            }
            let first = try await Self.time { try await get() }
            var following: [Double] = []
            for _ in 0..<20 { following.append(try await Self.time { try await get() }) }
            try await setup.silent?.stop()
            serving.cancel()
            _ = await serving.result
            await cache.waitForBackgroundWork(upTo: .seconds(5))
            try await network.shutdown()
            return (first, following)
        }
    }

    /// How long URLSession takes to fail on a closed port.
    private func urlSessionRefused() async throws -> Measurement {
        let origin = TestOrigin()
        try await origin.start()
        let url = origin.url("/page")
        try await origin.stop()
        let session = URLSession(configuration: .ephemeral)
        var times: [Double] = []
        for _ in 0..<Self.samples {
            times.append(await Self.timeNoThrow { _ = try? await session.data(from: url) })
        }
        session.invalidateAndCancel()
        return Measurement(
            group: "offline answer, origin refusing", name: "plain URLSession: time to the connection error",
            webCache: Self.median(times),
            note: "the alternative: an app without the cache learns of the failure only then, and has nothing to show")
    }

    static func time(_ body: () async throws -> Void) async throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start)
    }

    static func timeNoThrow(_ body: () async -> Void) async -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        await body()
        return Double(DispatchTime.now().uptimeNanoseconds - start)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// Runs a process and returns the time until its first byte on stdout (or its end).
    static func timeToFirstByte(_ executable: URL, _ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let start = DispatchTime.now().uptimeNanoseconds
        try process.run()
        _ = output.fileHandleForReading.readData(ofLength: 1)
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
        _ = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure("webcache get exited \(process.terminationStatus)")
        }
        return elapsed
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Unwraps or fails the benchmark with where it happened.
func requireBench<T>(_ value: T?, _ what: String = "a value", line: Int = #line) throws -> T {
    guard let value else { throw BenchFailure("missing \(what) (OfflineBenchmarks.swift:\(line))") }
    return value
}
