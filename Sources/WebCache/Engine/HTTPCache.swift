import HTTPCaching
import HTTPTypes
import Logging
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An offline-first HTTP cache: answers requests from its store when the rules allow,
/// revalidates or fetches when they don't, and stores what may be stored.
///
/// ```swift
/// let cache = try HTTPCache(
///     configuration: .init(directory: cachesURL.appendingPathComponent("WebCache")),
///     origin: AsyncHTTPClientOrigin())
/// let response = try await cache.response(for: HTTPRequest(url: url), followRedirects: true)
/// print(response.head.headerFields[.cacheStatus]!)   // "WebCache; hit; ttl=3542"
/// ```
///
/// Request path: app rules (block-list, allow-list, enabled) → lookup by key and `Vary` →
/// the decision of `CacheRules` (HTTPCaching) adjusted by the ``RequestMode`` and app lifetimes →
/// fresh hit, stale hit (max-stale, stale-while-revalidate with one background refresh,
/// stale-if-error, offline), conditional request, or fetch → store → respond with
/// `Cache-Status`. Concurrent identical requests share one origin fetch. A failing store never
/// fails a request the origin can serve.
public final class HTTPCache: Sendable {
    /// The store behind the cache.
    public let store: CacheStore
    let origin: any OriginFetching
    /// The configuration; ``updatePolicy(_:)`` and ``setWillCache(_:)`` change it at run time.
    let settings: Locked<Configuration>
    /// The parts of the configuration that stay as they were given to `init`, read without the
    /// lock (and without copying every field of the configuration, as reading it whole does).
    let rules: CacheRules
    /// The time, as the configuration tells it (`Configuration.now`): for the proxy's memos of
    /// answers, whose lifetimes follow the answers' `Age`.
    package let clock: @Sendable () -> Date
    let cacheName: String
    let offlinePosture: OfflinePosture
    let logger: Logger
    let reachabilitySettings: ReachabilitySettings?
    let configuredNetworkTimeout: Duration?
    let validations = InFlightFetches<String, ValidationResult>()
    let misses = InFlightFetches<FetchKey, StreamedFetch>()
    let countersBox = Locked(CacheCounters())
    let backgroundTasks = Locked([String: Task<Void, Never>]())
    let backgroundSerial = Locked(0)
    let entryFacts = EntryFactsCache()
    let reachability: OriginReachability

    /// Opens the store and creates the cache; origins the store remembers as unreachable stay
    /// so until their back-off window has passed.
    public init(configuration: Configuration, origin: some OriginFetching) throws {
        var storeConfiguration = configuration.store
        storeConfiguration.now = configuration.now
        let store = try CacheStore(configuration: storeConfiguration)
        self.store = store
        self.origin = origin
        self.settings = Locked(configuration)
        self.rules = configuration.rules
        self.clock = configuration.now
        self.cacheName = configuration.cacheName
        self.offlinePosture = configuration.offlinePosture
        self.logger = configuration.logger
        self.reachabilitySettings = configuration.reachability
        self.configuredNetworkTimeout = configuration.networkTimeout
        var remembered: [OriginStatus] = []
        if configuration.reachability != nil {
            do {
                remembered = try store.originStatuses()
            } catch {
                configuration.logger.warning("could not read which origins were unreachable, trying them all: \(error)")
            }
        }
        self.reachability = OriginReachability(
            remembered: remembered,
            capacity: configuration.reachability?.maximumOrigins ?? ReachabilitySettings().maximumOrigins)
    }

    /// The configuration in force.
    public var configuration: Configuration { settings.withLock { $0 } }

    /// The two settings that change at run time and a request reads, copied together (the whole
    /// configuration would cost a retain and a release for each of its two dozen references).
    struct SettingsInForce {
        var policy: CachePolicy
        /// ``Configuration``'s revision: which settings an answer was worked out under.
        var revision: UInt64
    }

    /// The policy and revision in force, read together.
    var settingsInForce: SettingsInForce {
        settings.withLock { SettingsInForce(policy: $0.policy, revision: $0.revision) }
    }

    /// The app policy in force.
    public var policy: CachePolicy { settings.withLock { $0.policy } }

    /// Changes the app policy at run time (an app's settings screen); takes effect for the
    /// next request.
    public func updatePolicy(_ change: (inout CachePolicy) -> Void) {
        settings.withLock { settings in
            change(&settings.policy)
            settings.revision &+= 1
        }
    }

    /// Replaces the hook that may change or refuse what is stored.
    public func setWillCache(_ hook: (@Sendable (HTTPRequest, HTTPResponse) -> HTTPResponse?)?) {
        settings.withLock { settings in
            settings.willCache = hook
            settings.revision &+= 1
        }
    }

    /// What the cache has done since it was created.
    public var counters: CacheCounters { countersBox.withLock { $0 } }

    /// Responses stored and still waiting for the store's index writer (see
    /// `CacheStore.entriesWaitingForIndex`): near zero while the disk keeps up; at the store's
    /// `CacheStore.Configuration.maximumEntriesOnTheirWay` (a slow or stuck disk), responses are
    /// answered but not stored.
    public var entriesWaitingForIndex: Int { store.entriesWaitingForIndex }

    /// Lookups the store's memory tier could not answer, read from its index, since the store
    /// was opened (`CacheStore.indexLookups`). Many, beside ``counters``' hits, say that the
    /// entries asked for do not fit in `CacheStore.Configuration.memoryCapacity`.
    public var indexLookups: Int { store.indexLookups }

    /// The bytes of entries the store's memory tier holds now (`CacheStore.memoryTierBytes`), of
    /// `CacheStore.Configuration.memoryCapacity`.
    public var memoryTierBytes: Int { store.memoryTierBytes }

    /// Answers `request`; with `followRedirects`, follows up to
    /// ``Configuration/maximumRedirects`` redirects (each hop is cached by its own headers, so a
    /// cached chain replays offline).
    public func response(
        for request: HTTPRequest, body: Data? = nil, mode: RequestMode = .default, followRedirects: Bool = false
    ) async throws -> CacheResponse {
        try await answer(request, body: body, followingRedirects: followRedirects) { request, body in
            var response = try await respond(to: request, body: body, mode: mode)
            try await collectBody(of: &response)
            return (response, response.head, response.url)
        }
    }

    /// What `answerOne` answers to `request` and, with `followingRedirects`, to each redirect
    /// it answers after that, up to ``Configuration/maximumRedirects``. `answerOne` gives its
    /// answer with the answer's head and URL, which a redirect is read from.
    private func answer<Answer>(
        _ request: HTTPRequest, body: Data?, followingRedirects: Bool,
        _ answerOne: (HTTPRequest, Data?) async throws -> (Answer, HTTPResponse, URL)
    ) async throws -> Answer {
        var current = request
        var currentBody = body
        var seen: Set<String> = []
        for _ in 0...configuration.maximumRedirects {
            let (answer, head, url) = try await answerOne(current, currentBody)
            guard followingRedirects, let next = redirect(from: head, at: url, request: current) else { return answer }
            guard seen.insert(next.url?.absoluteString ?? "").inserted else {
                throw CacheError(.tooManyRedirects, "redirect loop at \(next.url?.absoluteString ?? "?")")
            }
            if next.method != current.method { currentBody = nil }
            current = next
        }
        throw CacheError(
            .tooManyRedirects,
            "more than \(configuration.maximumRedirects) redirects from \(request.url?.absoluteString ?? "?")")
    }

    /// Answers `request` like ``response(for:body:mode:followRedirects:)`` without following
    /// redirects, and without waiting for the body: a response from the origin is answered as
    /// soon as its head arrives and its body streams as it arrives (while it is being stored).
    ///
    /// `interim` receives the origin's interim responses (`103 Early Hints`) to this request, in
    /// order, before this returns, when the origin sees them (`SwiftNIOOrigin`); a request that
    /// joins another's fetch, or is answered from the store, gets none.
    ///
    /// With `followRedirects`, redirects are followed as ``response(for:body:mode:followRedirects:)``
    /// follows them, without waiting for their bodies (which are stored as they arrive all the
    /// same), and the final response streams.
    ///
    /// A stored body of ``streamedStoredBodiesFrom`` bytes or more is read from its file a chunk at
    /// a time as the body is iterated, never whole; its checksum is checked before this returns
    /// (a corrupt one is removed, and the request answered as if it had not been stored).
    public func streamingResponse(
        for request: HTTPRequest, body: Data? = nil, mode: RequestMode = .default,
        interim: InterimResponseHandler? = nil, followRedirects: Bool = false
    ) async throws -> StreamingCacheResponse {
        try await answer(request, body: body, followingRedirects: followRedirects) { request, body in
            let response = try await streamingResponse(
                for: request, url: nil, body: body, mode: mode, interim: interim,
                bodyStreamsFrom: Self.streamedStoredBodiesFrom)
            return (response, response.head, response.url)
        }
    }

    /// ``streamingResponse(for:body:mode:interim:followRedirects:)`` for a request whose body is
    /// still arriving (an upload): the body goes to the origin as it comes, never held whole.
    /// Redirects are not followed, since the body cannot be sent twice. A request answered
    /// without the origin (an error, offline) leaves the body unread; call
    /// ``RequestBodyStream/cancel()`` then if its producer waits.
    public func streamingResponse(
        for request: HTTPRequest, bodyStream: RequestBodyStream, mode: RequestMode = .default,
        interim: InterimResponseHandler? = nil
    ) async throws -> StreamingCacheResponse {
        try await streamingResponse(
            for: request, url: nil, bodyStream: bodyStream, mode: mode, interim: interim,
            bodyStreamsFrom: Self.streamedStoredBodiesFrom)
    }

    /// The size from which ``streamingResponse(for:body:mode:interim:followRedirects:)`` reads a
    /// stored body from its file as it is iterated rather than into memory first.
    public static let streamedStoredBodiesFrom = 1 << 20

    /// ``streamingResponse(for:body:mode:interim:followRedirects:)`` for a caller that has the request's URL
    /// already (the proxy), which is then not worked out again, and, when
    /// ``storedAnswer(for:url:bodyFilesFrom:sharing:)`` found that the request needs the origin,
    /// the `trip` it decided on, which is then taken without looking the request up again.
    ///
    /// With `bodyStreamsFrom`, a whole stored body of at least that many bytes is read from its
    /// file as the body is iterated (``StoredBodyChunks``).
    ///
    /// A `bodyStream` (an upload still arriving) goes to the origin as it arrives, in place of
    /// `body`, when the request goes there (an unsafe method, or one passed through); a request
    /// answered otherwise leaves it unread.
    nonisolated(nonsending) package func streamingResponse(
        for request: HTTPRequest, url: URL?, body: Data? = nil, bodyStream: RequestBodyStream? = nil,
        mode: RequestMode = .default, interim: InterimResponseHandler? = nil, trip: OriginTrip? = nil,
        bodyStreamsFrom streamedSize: Int? = nil
    ) async throws -> StreamingCacheResponse {
        let response = try await respond(
            to: request, url: url, body: body, bodyStream: bodyStream, mode: mode, interim: interim, trip: trip,
            bodyStreamsFrom: streamedSize)
        let stream: ResponseBodyStream
        switch response.content {
        case .arriving(let broadcast): stream = ResponseBodyStream(source: .arriving(broadcast))
        case .bytes(let body): stream = ResponseBodyStream(source: .complete(body))
        case .storedFile(let entry, _):
            // Only asked for whole, by `bodyStreamsFrom`. A body that turns out unusable is
            // removed by the store; the request is then answered as a miss.
            do {
                stream = ResponseBodyStream(source: .stored(try StoredBodyChunks(store: store, entry: entry)))
            } catch {
                storeProblem("the stored body of \(entry.key) could not be read: \(error)")
                // Counted as the miss it becomes, not as a request and a hit besides.
                count {
                    $0.requests -= 1
                    if response.cacheStatus.hit {
                        $0.hits -= 1
                        $0.bytesFromCache -= entry.bodySize
                    }
                }
                return try await streamingResponse(
                    for: request, url: url, body: body, mode: mode, interim: interim)
            }
        }
        return StreamingCacheResponse(
            head: response.head, body: stream, cacheStatus: response.cacheStatus, url: response.url)
    }

    /// Waits for a body still arriving from the origin.
    private func collectBody(of response: inout CacheResponse) async throws {
        guard case .arriving(let arriving) = response.content else { return }
        do {
            response.content = .bytes(try await arriving.collect())
        } catch let error as OriginError where error.code == .unreachable {
            throw CacheError(.offlineMiss, "\(response.url.absoluteString): the origin stopped answering", cause: error)
        } catch {
            throw CacheError(.originFailed, "receiving \(response.url.absoluteString) failed", cause: error)
        }
    }

    /// Removes everything stored (an app's "clear cache" button).
    public func clear() throws { try store.removeAll() }

    /// Removes everything stored for `host`.
    @discardableResult
    public func clear(host: String) throws -> Int { try store.remove(host: host) }

    /// Removes everything stored for `url`.
    @discardableResult
    public func clear(url: URL) throws -> Int { try store.remove(url: url) }

    /// Waits for background work to finish (stale-while-revalidate refreshes, probes of
    /// unreachable origins, exchanges that outlived the network timeout); for tests and orderly
    /// shutdown.
    public func waitForBackgroundWork() async {
        let tasks = backgroundTasks.withLock { Array($0.values) }
        for task in tasks { await task.value }
    }

    /// Waits for background work, but not longer than `limit`; returns whether it all finished.
    /// A short-lived process (a command) calls it before it exits, so that a probe of an
    /// unreachable origin can tell the store whether the origin is back.
    @discardableResult
    public func waitForBackgroundWork(upTo limit: Duration) async -> Bool {
        let all = Task<Void, any Error> { await waitForBackgroundWork() }
        return await Deadline.result(of: all, within: limit) != nil
    }

    /// ``Configuration/networkTimeout(under:)`` of the configuration in force.
    func networkTimeout(under policy: CachePolicy) -> Duration? {
        Configuration.networkTimeout(under: policy, otherwise: configuredNetworkTimeout)
    }

    func count(_ change: (inout CacheCounters) -> Void) {
        countersBox.withLock(change)
    }

    /// A store that failed under a request (a full disk, a corrupt body or index): logged as a
    /// warning and counted (``CacheCounters/storeProblems``); the request goes on without it.
    func storeProblem(_ message: @autoclosure () -> Logger.Message, level: Logger.Level = .warning) {
        count { $0.storeProblems += 1 }
        logger.log(level: level, message())
    }

    /// The request a redirect `head` from `url` leads to, from `request`; `nil` for any other
    /// response.
    private func redirect(from head: HTTPResponse, at url: URL, request: HTTPRequest) -> HTTPRequest? {
        let code = head.status.code
        guard [301, 302, 303, 307, 308].contains(code), let location = head.headerFields.value(.location),
            let target = URLReference.resolve(location, against: url)
        else { return nil }
        var next = HTTPRequest(method: request.method, url: target, headerFields: request.headerFields)
        // RFC 9110 §15.4: 303 always, and 301/302 after POST by long practice, continue with GET.
        if code == 303 || ((code == 301 || code == 302) && request.method == .post) {
            next.method = .get
            next.headerFields[.contentType] = nil
            next.headerFields[.contentLength] = nil
        }
        if URLReference.sameOrigin(target, url) == false {
            next.headerFields[.authorization] = nil
            next.headerFields[.cookie] = nil
        }
        return next
    }
}
