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
    ///
    /// Offline first: when the origin is known to be unreachable and the offline policy allows
    /// the stored response, it is served at once (the one request that may probe the origin
    /// again does so in the background); when the origin does not answer within the network
    /// timeout, it is served then, and the exchange goes on in the background.
    func revalidate(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, decision: ReuseDecision, policy: CachePolicy,
        inBackground: Bool = false, admitted alreadyAdmitted: Bool = false
    ) async throws -> CacheResponse {
        var admitted = alreadyAdmitted
        if !inBackground, case .unreachable(let status, let probe) = admission(for: url) {
            if let answer = try await offlineFallback(
                entry, request: request, url: url, policy: policy, detail: "offline")
            {
                count { $0.unreachableSkips += 1 }
                if probe { revalidateInBackground(entry, request: request, url: url, policy: policy, admitted: true) }
                return answer
            }
            guard probe else {
                throw CacheError(
                    .offlineMiss, "\(url.absoluteString) is too stale to serve and the origin is unreachable",
                    cause: skippedOrigin(status))
            }
            admitted = true
        }

        if !inBackground, !admitted, let origin = OriginReachability.origin(of: url),
            reachability.isSilent(
                origin, now: clock(), limit: reachabilitySettings?.maximumBackoff.seconds ?? 60),
            let answer = try await offlineFallback(
                entry, request: request, url: url, policy: policy, detail: "network-timeout")
        {
            // The origin let another request outlive the network timeout and has not answered
            // since: that exchange is the probe; this request does not wait too.
            count { $0.networkTimeouts += 1 }
            return answer
        }

        guard !inBackground, let timeout = networkTimeout(under: policy),
            offlineAnswerAllowed(entry, request: request, policy: policy, now: clock())
        else {
            let outcome: Result<(FetchResult, Bool), any Error>
            do {
                outcome = .success(
                    try await validationExchange(
                        entry, request: request, decision: decision, policy: policy, admitted: admitted))
            } catch {
                outcome = .failure(error)
            }
            return try await respondToValidation(
                outcome, entry: entry, request: request, url: url, decision: decision, policy: policy)
        }
        // A stored response could answer: the origin gets `timeout` to do better.
        let exchange = Task { [self] in
            try await validationExchange(
                entry, request: request, decision: decision, policy: policy, admitted: admitted)
        }
        if let finished = await Deadline.result(of: exchange, within: timeout) {
            return try await respondToValidation(
                finished, entry: entry, request: request, url: url, decision: decision, policy: policy)
        }
        keepInBackground(exchange)
        if let origin = OriginReachability.origin(of: url) {
            reachability.recordSilence(of: origin, now: clock())
        }
        count { $0.networkTimeouts += 1 }
        logger.info("\(url.absoluteString): no answer within \(timeout), serving the stored response")
        if let answer = try await offlineFallback(
            entry, request: request, url: url, policy: policy, detail: "network-timeout")
        {
            return answer
        }
        return try await respondToValidation(
            await exchange.result, entry: entry, request: request, url: url, decision: decision, policy: policy)
    }

    /// The conditional exchange, shared by every request validating `entry` at the same time.
    private func validationExchange(
        _ entry: CacheEntry, request: HTTPRequest, decision: ReuseDecision, policy: CachePolicy, admitted: Bool
    ) async throws -> (FetchResult, Bool) {
        var validating = request
        validating.method = .get
        let conditional = rules.conditionalRequest(for: validating, revalidating: [entry.stored])
        let getRequest = validating
        return try await fetches.value(for: "validate \(entry.id)") { [self] in
            let removalMark = store.removalMark
            let (response, requestTime, responseTime) = try await exchange(conditional, body: nil, admitted: admitted)
            if response.head.status == .notModified, rules.notModified(response.head, appliesTo: entry.stored) {
                let updated = rules.updating(
                    entry.stored, with: response.head, requestTime: requestTime, responseTime: responseTime)
                var refreshed = entry
                refreshed.stored = updated
                do {
                    refreshed = try store.updateHead(of: entry, with: updated)
                } catch {
                    storeProblem("could not refresh the stored head of \(entry.key): \(error)")
                }
                return FetchResult(
                    response: response, requestTime: requestTime, responseTime: responseTime, refreshed: refreshed)
            }
            if decision.servesStale(insteadOf: response.head.status.code) {
                return FetchResult(response: response, requestTime: requestTime, responseTime: responseTime)
            }
            let stored = storeIfAllowed(
                getRequest, response: response, requestTime: requestTime, responseTime: responseTime,
                removalMark: removalMark, policy: policy)
            return FetchResult(response: response, requestTime: requestTime, responseTime: responseTime, stored: stored)
        }
    }

    /// The answer once the validation exchange has ended.
    private func respondToValidation(
        _ outcome: Result<(FetchResult, Bool), any Error>, entry: CacheEntry, request: HTTPRequest, url: URL,
        decision: ReuseDecision, policy: CachePolicy
    ) async throws -> CacheResponse {
        let result: FetchResult
        let collapsed: Bool
        do {
            (result, collapsed) = try outcome.get()
        } catch let error as OriginError where error.code == .unreachable {
            if let response = try await offlineFallback(
                entry, request: request, url: url, policy: policy, detail: "offline")
            {
                return response
            }
            throw CacheError(
                .offlineMiss, "\(url.absoluteString) is too stale to serve and the origin is unreachable", cause: error)
        } catch let error as OriginError {
            if decision.mayServeStaleOnError {
                count { $0.staleServed += 1 }
                return try await serveStoredOrRefetch(
                    entry, request: request, url: url, now: clock(), detail: "stale-if-error",
                    policy: policy)
            }
            throw CacheError(.originFailed, "revalidating \(url.absoluteString) failed", cause: error)
        }

        let code = result.response.head.status.code
        if let refreshed = result.refreshed {
            var status = CacheStatus(
                cache: cacheName, forward: .stale, forwardStatus: 304, collapsed: collapsed)
            status.stored = true
            return try await serveStoredOrRefetch(
                refreshed, request: request, url: url, now: clock(), detail: nil, policy: policy,
                status: status)
        }
        if result.stored == nil && decision.servesStale(insteadOf: code) {
            count { $0.staleServed += 1 }
            return try await serveStoredOrRefetch(
                entry, request: request, url: url, now: clock(), detail: "stale-if-error", policy: policy)
        }
        var validating = request
        validating.method = .get
        if code == 304 {
            // A 304 for a different validator: fetch the full response (RFC 9111 §4.3.4).
            return try await fetchAndRespond(validating, key: entry.key, url: url, forward: .stale, policy: policy)
        }
        var status = CacheStatus(
            cache: cacheName, forward: .stale, forwardStatus: code, stored: result.stored != nil,
            collapsed: collapsed)
        if let stored = result.stored {
            status.ttl = rules.freshnessLeft(of: stored.stored, at: result.responseTime)
        }
        return originResponse(result.response, request: request, url: url, status: status)
    }

    /// Offline: the stored response, if the offline policy allows it (see
    /// ``offlineAnswerAllowed(_:request:policy:now:)``); `detail` says why it is served.
    func offlineFallback(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, policy: CachePolicy, detail: String
    ) async throws -> CacheResponse? {
        let now = clock()
        guard offlineAnswerAllowed(entry, request: request, policy: policy, now: now) else { return nil }
        count { $0.staleServed += 1 }
        return try await serveStoredOrRefetch(
            entry, request: request, url: url, now: now, detail: detail, policy: policy)
    }

    /// Whether `entry` may answer `request` while the origin cannot: what RFC 9111 §4.2.4
    /// allows within ``CachePolicy/offlineMaxStale``; for a ``OfflinePosture/personal`` cache
    /// also what it would have validated (`no-cache`, `must-revalidate`, `s-maxage`) unless
    /// ``CachePolicy/offlineStrict``, and whatever a preload manifest holds in any case.
    func offlineAnswerAllowed(_ entry: CacheEntry, request: HTTPRequest, policy: CachePolicy, now: Date) -> Bool {
        let offline = rules.reuse(
            entry.stored, facts: entryFacts.facts(of: entry, rules: rules), for: request, now: now,
            conditions: ReuseConditions(originReachable: false, maxStaleWhenDisconnected: policy.offlineMaxStale))
        if case .useStale = offline.action { return true }
        if offline.mayServeStaleOnError { return true }
        guard offlinePosture == .personal, offline.staleness <= (policy.offlineMaxStale ?? Int.max),
            offline.action != .fetch
        else { return false }
        if !policy.offlineStrict { return true }
        do {
            return try store.isHeldByManifest(entry.key)
        } catch {
            storeProblem("could not tell whether a page manifest holds \(entry.key): \(error)")
            return false
        }
    }

    /// stale-while-revalidate, or the probe of an unreachable origin: one background refresh
    /// per entry.
    func revalidateInBackground(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, policy: CachePolicy, admitted: Bool = false
    ) {
        let id = "revalidate \(entry.id)"
        backgroundTasks.withLock { tasks in
            guard tasks[id] == nil else {
                if admitted, let origin = OriginReachability.origin(of: url) { reachability.endProbe(of: origin) }
                return
            }
            tasks[id] = Task { [self] in
                var decision = rules.reuse(entry.stored, for: request, now: clock())
                decision.mayServeStaleOnError = true
                _ = try? await revalidate(
                    entry, request: request, url: url, decision: decision, policy: policy, inBackground: true,
                    admitted: admitted)
                _ = backgroundTasks.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    /// Lets an exchange a request stopped waiting for finish (and store what it brings), so
    /// that ``waitForBackgroundWork()`` also waits for it.
    func keepInBackground<T: Sendable>(_ task: Task<T, any Error>) {
        let serial = backgroundSerial.withLock { serial -> Int in
            serial += 1
            return serial
        }
        let id = "exchange \(serial)"
        backgroundTasks.withLock { tasks in
            tasks[id] = Task { [self] in
                _ = await task.result
                _ = backgroundTasks.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    /// A validation's new response from the origin, whole, as it goes to the client.
    func originResponse(_ response: OriginResponse, request: HTTPRequest, url: URL, status: CacheStatus)
        -> CacheResponse
    {
        var head = response.head
        head.headerFields = MessageFields.removingHopByHop(head.headerFields)
        head.headerFields.appendCacheStatus(status)
        let body = request.method == .head ? Data() : response.body
        return CacheResponse(head: head, body: body, cacheStatus: status, url: url)
    }
}
