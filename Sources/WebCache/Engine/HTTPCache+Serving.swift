import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// Serves a stored entry, or fetches it again when its body turns out unusable.
    func serveStoredOrRefetch(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, now: Date, detail: String?, policy: CachePolicy,
        status given: CacheStatus? = nil, decision known: ReuseDecision? = nil
    ) async throws -> CacheResponse {
        if let response = serveStored(
            entry, request: request, url: url, now: now, detail: detail, policy: policy, status: given, decision: known)
        {
            return response
        }
        return try await fetchAndRespond(request, key: entry.key, url: url, forward: .miss, policy: policy)
    }

    /// Serves a stored entry: `Age`, `Cache-Status`, a 304 when the client's own validators
    /// match, no body for HEAD. `nil` when the body turns out unusable (corrupt, vanished): the
    /// caller treats it as a miss.
    ///
    /// With `bodyFilesFrom`, a body of at least that many bytes in a file the store has verified
    /// is not read: the response names the entry in `bodyFile` instead.
    func serveStored(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, now: Date, detail: String?, policy: CachePolicy,
        status given: CacheStatus? = nil, decision known: ReuseDecision? = nil, bodyFilesFrom minimumSize: Int? = nil
    ) -> CacheResponse? {
        let configuration = self.configuration
        let rules = configuration.rules
        let notModified = rules.clientPreconditionsMatch(request, stored: entry.stored)
        let sendsFile = request.method != .head && !notModified && minimumSize.map { entry.bodySize >= $0 } == true
            && store.hasVerifiedBodyFile(entry)
        let body: Data
        do {
            body = sendsFile ? Data() : try store.readBody(entry)
        } catch {
            logger.warning("stored body of \(entry.key) unusable, fetching again: \(error)")
            return nil
        }
        // The caller usually has the decision already; only age and staleness are read here.
        let decision = known ?? decide(entry, request: request, mode: .default, now: now, configuration: configuration)
        var status = given ?? CacheStatus(cache: configuration.cacheName, hit: true)
        status.ttl = -decision.staleness
        status.detail = status.detail ?? detail
        var head: HTTPResponse
        let servedBody: Data
        if notModified {
            head = rules.notModifiedResponse(for: entry.stored)
            head.headerFields[.age] = String(decision.age)
            servedBody = Data()
        } else {
            head = rules.headForServing(entry.stored, age: decision.age)
            servedBody = request.method == .head ? Data() : body
        }
        head.headerFields.appendCacheStatus(status)
        if status.hit {
            let bytes = sendsFile ? entry.bodySize : servedBody.count
            count { $0.hits += 1; $0.bytesFromCache += bytes }
        }
        store.recordAccess(entry, at: now, appExpiry: slidingExpiry(of: entry, url: url, policy: policy, now: now))
        var response = CacheResponse(head: head, body: servedBody, cacheStatus: status, url: url)
        if sendsFile { response.bodyFile = entry }
        return response
    }

    /// The app-set expiry a use of `entry` at `now` moves on to, under a lifetime rule with
    /// sliding expiry (seed 002); `nil` when no such rule applies.
    func slidingExpiry(of entry: CacheEntry, url: URL, policy: CachePolicy, now: Date) -> Date? {
        guard !policy.lifetimes.isEmpty,
            let rule = policy.lifetimeRule(for: url, contentType: entry.stored.response.headerFields[.contentType]),
            rule.slidingExpiry == true, let seconds = rule.ttl ?? rule.defaultTTL
        else { return nil }
        return now.addingTimeInterval(TimeInterval(seconds))
    }

    /// The empty answer to a blocked URL (seed 003's ad filtering); the network is never used.
    func blockedResponse(url: URL, configuration: Configuration) -> CacheResponse {
        let status = CacheStatus(cache: configuration.cacheName, forward: .bypass, detail: "blocked")
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentLength] = "0"
        head.headerFields[.cacheControl] = "no-store"
        head.headerFields.appendCacheStatus(status)
        return CacheResponse(head: head, body: Data(), cacheStatus: status, url: url)
    }

    /// The answer to `only-if-cached` (or only-cache mode) when nothing usable is stored
    /// (RFC 9111 §5.2.1.7).
    func gatewayTimeout(url: URL, configuration: Configuration) -> CacheResponse {
        let status = CacheStatus(cache: configuration.cacheName, forward: .miss, detail: "only-if-cached")
        var head = HTTPResponse(status: .gatewayTimeout)
        head.headerFields[.contentLength] = "0"
        head.headerFields.appendCacheStatus(status)
        return CacheResponse(head: head, body: Data(), cacheStatus: status, url: url)
    }
}
