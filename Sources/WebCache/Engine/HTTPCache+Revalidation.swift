import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// Validates a stored response (RFC 9111 §4.3): a 304 refreshes and serves it; another
    /// answer replaces it; an error serves it stale where stale-if-error or the offline policy
    /// allow.
    func revalidate(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, decision: ReuseDecision, policy: CachePolicy
    ) async throws -> CacheResponse {
        let configuration = self.configuration
        let rules = configuration.rules
        var getRequest = request
        getRequest.method = .get
        let validating = getRequest
        let conditional = rules.conditionalRequest(for: validating, revalidating: [entry.stored])
        let result: FetchResult
        let collapsed: Bool
        do {
            (result, collapsed) = try await fetches.value(for: "validate \(entry.id)") { [self] in
                let (response, requestTime, responseTime) = try await exchange(conditional, body: nil)
                if response.head.status == .notModified, rules.notModified(response.head, appliesTo: entry.stored) {
                    let updated = rules.updating(entry.stored, with: response.head, requestTime: requestTime, responseTime: responseTime)
                    var refreshed = entry
                    refreshed.stored = updated
                    do {
                        refreshed = try store.updateHead(of: entry, with: updated)
                    } catch {
                        logger.warning("could not refresh the stored head of \(entry.key): \(error)")
                    }
                    return FetchResult(response: response, requestTime: requestTime, responseTime: responseTime, refreshed: refreshed)
                }
                if [500, 502, 503, 504].contains(response.head.status.code) && decision.mayServeStaleOnError {
                    return FetchResult(response: response, requestTime: requestTime, responseTime: responseTime)
                }
                let stored = storeIfAllowed(validating, response: response, requestTime: requestTime, responseTime: responseTime, policy: policy)
                return FetchResult(response: response, requestTime: requestTime, responseTime: responseTime, stored: stored)
            }
        } catch let error as OriginError where error.kind == .unreachable {
            if let response = try await offlineFallback(entry, request: request, url: url, policy: policy, decision: decision) {
                return response
            }
            throw CacheError(.offlineMiss, "\(url.absoluteString) is too stale to serve and the origin is unreachable", cause: error)
        } catch let error as OriginError {
            if decision.mayServeStaleOnError {
                count { $0.staleServed += 1 }
                return try await serveStoredOrRefetch(entry, request: request, url: url, now: configuration.now(), detail: "stale-if-error", policy: policy)
            }
            throw CacheError(.originFailed, "revalidating \(url.absoluteString) failed", cause: error)
        }

        let code = result.response.head.status.code
        if let refreshed = result.refreshed {
            var status = CacheStatus(cache: configuration.cacheName, forward: .stale, forwardStatus: 304, collapsed: collapsed)
            status.stored = true
            return try await serveStoredOrRefetch(refreshed, request: request, url: url, now: configuration.now(), detail: nil, policy: policy, status: status)
        }
        if result.stored == nil && [500, 502, 503, 504].contains(code) && decision.mayServeStaleOnError {
            count { $0.staleServed += 1 }
            return try await serveStoredOrRefetch(entry, request: request, url: url, now: configuration.now(), detail: "stale-if-error", policy: policy)
        }
        if code == 304 {
            // A 304 for a different validator: fetch the full response (RFC 9111 §4.3.4).
            return try await fetchAndRespond(validating, key: entry.key, url: url, forward: .stale, policy: policy)
        }
        var status = CacheStatus(
            cache: configuration.cacheName, forward: .stale, forwardStatus: code, stored: result.stored != nil, collapsed: collapsed)
        if let stored = result.stored {
            status.ttl = -rules.reuse(stored.stored, for: request, now: result.responseTime).staleness
        }
        return originResponse(result.response, request: request, url: url, status: status)
    }

    /// Offline: serve the stored response if the app's offline policy allows its staleness.
    func offlineFallback(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, policy: CachePolicy, decision: ReuseDecision
    ) async throws -> CacheResponse? {
        let configuration = self.configuration
        let now = configuration.now()
        let offline = configuration.rules.reuse(
            entry.stored, for: request, now: now,
            conditions: ReuseConditions(originReachable: false, maxStaleWhenDisconnected: policy.offlineMaxStale))
        let allowedByRFC: Bool
        if case .useStale = offline.action { allowedByRFC = true } else { allowedByRFC = offline.mayServeStaleOnError }
        // The app's offline policy (seeds 000, 001) may serve what RFC 9111 §4.2.4 would not
        // (no-cache, must-revalidate pages), within its staleness limit — never in a shared
        // cache, which answers many users and must follow the RFC.
        let strict = policy.offlineStrict || configuration.rules.kind.shared
        let withinLimit = offline.staleness <= (policy.offlineMaxStale ?? Int.max)
        guard allowedByRFC || (!strict && withinLimit) else { return nil }
        count { $0.staleServed += 1 }
        return try await serveStoredOrRefetch(entry, request: request, url: url, now: now, detail: "offline", policy: policy)
    }

    /// stale-while-revalidate: one background refresh per entry.
    func revalidateInBackground(_ entry: CacheEntry, request: HTTPRequest, url: URL, policy: CachePolicy) {
        let id = Int(truncatingIfNeeded: entry.id)
        backgroundTasks.withLock { tasks in
            guard tasks[id] == nil else { return }
            tasks[id] = Task { [self] in
                var decision = configuration.rules.reuse(entry.stored, for: request, now: configuration.now())
                decision.mayServeStaleOnError = true
                _ = try? await revalidate(entry, request: request, url: url, decision: decision, policy: policy)
                _ = backgroundTasks.withLock { $0.removeValue(forKey: id) }
            }
        }
    }
}
