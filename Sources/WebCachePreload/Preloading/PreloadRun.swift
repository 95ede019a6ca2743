import HTTPCaching
import HTTPTypes
import WebCache
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One preload run: its limits, its budget, and the fetches already made (each URL once).
final class PreloadRun: Sendable {
    /// A fetched resource: its result and, for pages and stylesheets, its body to scan.
    struct Fetched: Sendable {
        var result: ResourceResult
        var body: Data?
        var contentType: String?
    }

    let cache: HTTPCache
    let options: PreloadOptions
    let progress: AsyncStream<PreloadEvent>.Continuation?
    private let limiter: ConcurrencyLimiter
    private let fetches = Locked<[String: Task<Fetched, Never>]>([:])
    private let bytesFetched = Locked(0)
    private let deadline: ContinuousClock.Instant

    init(cache: HTTPCache, options: PreloadOptions, progress: AsyncStream<PreloadEvent>.Continuation?) {
        self.cache = cache
        self.options = options
        self.progress = progress
        self.limiter = ConcurrencyLimiter(total: options.concurrency, perHost: options.concurrencyPerHost)
        self.deadline = ContinuousClock.now.advanced(by: options.timeLimit)
    }

    /// A page, its subresources (stylesheets and frames followed), and its links.
    func loadPage(_ page: URL) async -> (PageReport, [URL]) {
        let visited = Locked(Set([page.absoluteString]))
        let fetched = await fetch(page, kind: nil)
        var results = [fetched.result]
        var links: [URL] = []
        if let body = fetched.body, Self.isHTML(fetched.contentType, body) {
            let references = HTMLReferences.scan(body, url: fetched.result.finalURL)
            links = references.links
            results += await loadAll(references.resources, of: page, visited: visited)
        }
        return (PageReport(page: page, resources: results, isPinned: false), links)
    }

    /// Fetches references concurrently, following stylesheets and frames.
    private func loadAll(_ references: [DiscoveredReference], of page: URL, visited: Locked<Set<String>>) async
        -> [ResourceResult]
    {
        let wanted = references.filter { reference in
            inScope(reference.url, of: page) && visited.withLock { $0.insert(reference.url.absoluteString).inserted }
        }
        return await withTaskGroup(of: (Int, [ResourceResult]).self) { group in
            for (position, reference) in wanted.enumerated() {
                group.addTask { (position, await self.load(reference, of: page, visited: visited)) }
            }
            return await group.reduce(into: []) { $0.append($1) }.sorted { $0.0 < $1.0 }.flatMap(\.1)
        }
    }

    private func load(_ reference: DiscoveredReference, of page: URL, visited: Locked<Set<String>>) async
        -> [ResourceResult]
    {
        let fetched = await fetch(reference.url, kind: reference.kind)
        guard let body = fetched.body else { return [fetched.result] }
        switch reference.kind {
        case .stylesheet:
            let css = String(decoding: body, as: UTF8.self)
            let nested = CSSReferences.scan(css).compactMap { found -> DiscoveredReference? in
                guard
                    let resolved = DiscoveredReference.resolve(
                        found.url, against: fetched.result.finalURL, kind: .other)
                else { return nil }
                return DiscoveredReference(
                    url: resolved.url,
                    kind: found.isImport ? .stylesheet : DiscoveredReference.kindOfStyleResource(resolved.url))
            }
            return [fetched.result] + (await loadAll(nested, of: page, visited: visited))
        case .frame where Self.isHTML(fetched.contentType, body):
            let references = HTMLReferences.scan(body, url: fetched.result.finalURL)
            return [fetched.result] + (await loadAll(references.resources, of: page, visited: visited))
        default:
            return [fetched.result]
        }
    }

    /// Fetches `url` through the cache once per run, within the limits (twice when one
    /// reference's kind reads the body and another's does not: the second is a hit).
    func fetch(_ url: URL, kind: DiscoveredReference.Kind?) async -> Fetched {
        let name = (Self.readsBody(of: kind) ? "read " : "") + url.absoluteString
        let task = fetches.withLock { running -> Task<Fetched, Never> in
            if let task = running[name] { return task }
            let task = Task { await self.fetchNow(url, kind: kind) }
            running[name] = task
            return task
        }
        return await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
    }

    private func fetchNow(_ url: URL, kind: DiscoveredReference.Kind?) async -> Fetched {
        let host = url.host?.lowercased() ?? ""
        return await limiter.run(host: host) {
            let clock = ContinuousClock()
            let start = clock.now
            func failed(_ reason: String, status: Int? = nil, finalURL: URL = url) -> Fetched {
                let result = ResourceResult(
                    url: url, finalURL: finalURL, kind: kind, status: status, bytes: 0, fromCache: false,
                    failure: reason,
                    duration: clock.now - start)
                progress?.yield(.failed(result))
                return Fetched(result: result)
            }
            if Task.isCancelled { return failed("cancelled") }
            if start >= deadline { return failed("not started: the time limit of \(options.timeLimit) was reached") }
            if bytesFetched.withLock({ $0 }) >= options.maximumBytes {
                return failed("not started: the byte limit of \(options.maximumBytes) was reached")
            }
            progress?.yield(.started(url, kind))
            var request = HTTPRequest(method: .get, url: url)
            request.headerFields[.userAgent] = options.userAgent
            request.headerFields[.accept] = Self.accept(for: kind)
            do {
                let response = try await cache.streamingResponse(
                    for: request, mode: options.mode, followRedirects: true)
                let status = response.head.status.code
                let (body, size) = try await Self.read(response, keeping: Self.readsBody(of: kind))
                bytesFetched.withLock { $0 += size }
                guard (200..<300).contains(status) else {
                    return failed("HTTP \(status)", status: status, finalURL: response.url)
                }
                if let reason = notStored(response, size: size) {
                    return failed(reason, status: status, finalURL: response.url)
                }
                var result = ResourceResult(
                    url: url, finalURL: response.url, kind: kind, status: status, bytes: size,
                    fromCache: response.cacheStatus.hit, failure: nil, duration: clock.now - start)
                result.keptOffline = ["offline", "network-timeout"].contains(response.cacheStatus.detail)
                progress?.yield(.finished(result))
                return Fetched(result: result, body: body, contentType: response.head.headerFields.value(.contentType))
            } catch {
                return failed("\(error)")
            }
        }
    }

    /// Why `response` (its body of `size` bytes read to its end) is not in the store, so that its
    /// page would not load offline; `nil` when it is (a hit, or stored by this fetch).
    func notStored(_ response: StreamingCacheResponse, size: Int) -> String? {
        if response.cacheStatus.hit { return nil }
        // The body has ended: its entry, if it is kept, is in the index or on its way there,
        // and a lookup in this process waits for it.
        if let key = CacheKey(url: response.url), (try? cache.store.lookup(key))?.isEmpty == false { return nil }
        let limit = cache.store.configuration.maximumEntrySize
        if size > limit {
            return
                "not stored: \(size) bytes, more than the store's maximumEntrySize (\(limit); storage.maximumEntrySize raises it)"
        }
        let status = response.head.headerFields.value(.cacheStatus) ?? "no Cache-Status"
        return "not stored: the response may not be kept (\(status))"
    }

    /// Whether the run reads bodies of `kind` for references (pages, frames, stylesheets). Other
    /// bodies — images, fonts, scripts, media — are stored as they arrive and counted, never
    /// held: a page's videos would otherwise all be in memory until the run ends.
    static func readsBody(of kind: DiscoveredReference.Kind?) -> Bool {
        switch kind {
        case nil, .frame, .stylesheet: true
        default: false
        }
    }

    /// Reads `response`'s body to its end (once it ends, the cache has stored what it will),
    /// whole when `keeping`; its size either way. A body cut short throws, saying where.
    static func read(_ response: StreamingCacheResponse, keeping: Bool) async throws -> (Data?, Int) {
        var kept = keeping ? Data() : nil
        var size = 0
        do {
            for try await chunk in response.body {
                size += chunk.count
                kept?.append(chunk)
            }
        } catch {
            throw CacheError(
                .originFailed, "\(response.url.absoluteString): the body ended after \(size) bytes", cause: error)
        }
        return (kept, size)
    }

    /// Whether `url` may be fetched for `page` under the run's scope.
    func inScope(_ url: URL, of page: URL) -> Bool {
        guard let host = url.host?.lowercased() else { return false }
        switch options.scope {
        case .anywhere:
            return true
        case .sameSite:
            return Self.site(of: host) == Self.site(of: page.host?.lowercased() ?? "")
        case .sameSiteAnd(let hosts):
            return Self.site(of: host) == Self.site(of: page.host?.lowercased() ?? "")
                || hosts.contains { HostNames.host(host, isWithin: $0.lowercased()) }
        }
    }

    /// The last two labels of a domain name; an IP address or a single label as is.
    static func site(of host: String) -> String {
        let labels = host.split(separator: ".")
        if labels.count <= 2 || host.contains(":") || labels.allSatisfy({ $0.allSatisfy(\.isNumber) }) { return host }
        return labels.suffix(2).joined(separator: ".")
    }

    static func isHTML(_ contentType: String?, _ body: Data) -> Bool {
        if let contentType = contentType?.lowercased() {
            return contentType.hasPrefix("text/html") || contentType.hasPrefix("application/xhtml")
        }
        let start = String(decoding: body.prefix(512), as: UTF8.self).lowercased()
        return start.contains("<!doctype html") || start.contains("<html")
    }

    static func accept(for kind: DiscoveredReference.Kind?) -> String {
        switch kind {
        case nil, .frame, .link: return "text/html,application/xhtml+xml,*/*;q=0.8"
        case .stylesheet: return "text/css,*/*;q=0.1"
        case .image: return "image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5"
        case .font: return "font/woff2,font/woff,*/*;q=0.5"
        case .script, .media, .manifest, .other: return "*/*"
        }
    }
}
