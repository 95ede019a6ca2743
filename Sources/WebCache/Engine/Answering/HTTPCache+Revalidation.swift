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
            let outcome: Result<(ValidationResult, Bool), any Error>
            do {
                outcome = .success(
                    try await validationExchange(
                        entry, request: request, url: url, decision: decision, policy: policy, admitted: admitted))
            } catch {
                outcome = .failure(error)
            }
            return try await respondToValidation(
                outcome, entry: entry, request: request, url: url, decision: decision, policy: policy)
        }
        // A stored response could answer: the origin gets `timeout` to do better.
        let exchange = Task { [self] in
            try await validationExchange(
                entry, request: request, url: url, decision: decision, policy: policy, admitted: admitted)
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

    /// The conditional exchange, shared by every request validating `entry` at the same time; it
    /// ends once the head is in (with a new response's first bytes; its body streams on).
    private func validationExchange(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, decision: ReuseDecision, policy: CachePolicy,
        admitted: Bool
    ) async throws -> (ValidationResult, Bool) {
        try await validations.value(for: "validate \(entry.id)") { [self] in
            try await validationTrip(
                entry, request: request, url: url, decision: decision, policy: policy, admitted: admitted)
        }
    }

    /// Sends the conditional request for `entry` and reads its answer's head: a 304 refreshes the
    /// stored head; an error the stored response may stand in for is left unread; anything else
    /// replaces the entry as its body arrives, stored as the unconditional request's response, and
    /// is returned once its first ``newResponseBytesFirst`` bytes are in.
    private func validationTrip(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, decision: ReuseDecision, policy: CachePolicy,
        admitted: Bool
    ) async throws -> ValidationResult {
        var validating = request
        validating.method = .get
        let conditional = rules.conditionalRequest(for: validating, revalidating: [entry.stored])
        let removalMark = store.removalMark
        let requestTime = clock()
        let origin = try await contactOrigin(url, admitted: admitted) {
            try await self.origin.stream(conditional, body: nil, interim: nil)
        }
        if origin.head.status == .notModified {
            for try await _ in origin.body {}  // none: a 304 ends with its head
            let responseTime = clock()
            guard rules.notModified(origin.head, appliesTo: entry.stored) else { return .otherValidator }
            var head = origin.head
            if !head.headerFields.contains(.date) { head.headerFields[.date] = HTTPDate.format(responseTime) }
            let updated = rules.updating(entry.stored, with: head, requestTime: requestTime, responseTime: responseTime)
            var refreshed = entry
            refreshed.stored = updated
            do {
                refreshed = try store.updateHead(of: entry, with: updated)
            } catch {
                storeProblem("could not refresh the stored head of \(entry.key): \(error)")
            }
            return .refreshed(refreshed)
        }
        // Not read: the origin's connection closes unless the (error) body came with the head.
        if decision.servesStale(insteadOf: origin.head.status.code) { return .servedStaleInstead }
        let fetch = await streamedFetch(
            origin, of: validating, key: entry.key, url: url, policy: policy, requestTime: requestTime,
            removalMark: removalMark, release: {})
        // Until its first bytes are in, the new response may still fail as an exchange does (the
        // stored copy then serves where stale-if-error or the offline policy allow), and it has
        // the network timeout to get them: a link that died after the head is a silent network.
        // Past them it streams, as a miss does.
        try await fetch.body.firstBytes(Self.newResponseBytesFirst)
        return .replaced(fetch)
    }

    /// How much of a validation's new response arrives before it answers (the whole of a
    /// smaller one): what the memory budget of an arriving body holds anyway.
    static let newResponseBytesFirst = BodyBroadcast.memoryBudget

    /// The answer once the validation exchange has ended.
    private func respondToValidation(
        _ outcome: Result<(ValidationResult, Bool), any Error>, entry: CacheEntry, request: HTTPRequest, url: URL,
        decision: ReuseDecision, policy: CachePolicy
    ) async throws -> CacheResponse {
        let result: ValidationResult
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

        switch result {
        case .refreshed(let refreshed):
            var status = CacheStatus(
                cache: cacheName, forward: .stale, forwardStatus: 304, collapsed: collapsed)
            status.stored = true
            return try await serveStoredOrRefetch(
                refreshed, request: request, url: url, now: clock(), detail: nil, policy: policy,
                status: status)
        case .servedStaleInstead:
            count { $0.staleServed += 1 }
            return try await serveStoredOrRefetch(
                entry, request: request, url: url, now: clock(), detail: "stale-if-error", policy: policy)
        case .otherValidator:
            var validating = request
            validating.method = .get
            return try await fetchAndRespond(validating, key: entry.key, url: url, forward: .stale, policy: policy)
        case .replaced(let fetch) where collapsed && !mayShare(fetch, with: request):
            // RFC 9111 §4: another request's new response is for this one only if the cache
            // could have served it to this one (not private, not no-store, reusable as it is).
            let own: Result<(ValidationResult, Bool), any Error>
            do {
                own = .success(
                    (
                        try await validationTrip(
                            entry, request: request, url: url, decision: decision, policy: policy, admitted: false),
                        false
                    ))
            } catch {
                own = .failure(error)
            }
            return try await respondToValidation(
                own, entry: entry, request: request, url: url, decision: decision, policy: policy)
        case .replaced(let fetch):
            if request.method == .head {
                // No reader follows the body to its end: storing it is background work (which a
                // command waits for before it exits), and a body not stored is given up.
                fetch.body.unread()
                keepInBackground(Task { await fetch.body.ended() })
            }
            return answer(fetch, to: request, url: url, forward: .stale, collapsed: collapsed)
        }
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
}
