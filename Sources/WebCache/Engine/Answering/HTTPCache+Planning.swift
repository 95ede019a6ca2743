import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// What answering one request takes, decided without suspending: an answer from the store
    /// (or from the app rules), or a trip to the origin.
    enum Step: Sendable {
        case answer(CacheResponse)
        case passThrough(url: URL, detail: String)
        case forwardUnsafe(url: URL)
        case fetch(HTTPRequest, key: CacheKey, url: URL, forward: CacheStatus.Forward)
        case revalidate(CacheEntry, url: URL, decision: ReuseDecision)
        /// A full GET for a stored prefix: the rest is fetched (``completeAndRespond``).
        case completePart(CacheEntry, part: ContentRange, key: CacheKey, url: URL)
        /// A fresh answer the caller already holds encoded (``storedAnswer(for:url:bodyFilesFrom:sharing:)``):
        /// counted and recorded, not built again.
        case answeredBefore(ReplayTerms, AnswerOffer)
        /// A new entry for `key` is on its way into the index (a miss just answered): decide
        /// again once ``CacheStore/entryOnItsWayWritten(_:atMost:)`` returns, rather than block the
        /// thread for the index writer.
        case entryOnItsWay(CacheKey)
    }

    /// Answers `request` from the store alone when it can: a fresh hit, a stale one the rules
    /// allow, a `304` to the client's own conditional request, a blocked URL, or the `504` of
    /// `only-if-cached`. Returns `nil` when the answer needs the origin; then
    /// ``response(for:body:mode:followRedirects:)`` or ``streamingResponse(for:body:mode:interim:followRedirects:)``
    /// answer it (and decide again). Never suspends, so an event loop may call it directly; while
    /// the entry of a miss just answered is still on its way into the index (a millisecond or
    /// so), it waits for the index writer.
    ///
    /// Requests with a body (other than GET and HEAD) always need the origin.
    public func storedResponse(for request: HTTPRequest, mode: RequestMode = .default) -> CacheResponse? {
        guard request.method == .get || request.method == .head,
            case .answer(let response)? = try? plan(request, mode: mode, entryOnItsWay: .waitFor)
        else { return nil }
        count { $0.requests += 1 }
        return response
    }

    /// An answer from the store alone, for a caller that keeps the encodings of fresh answers
    /// (the proxy): ``storedResponse(for:mode:)`` in the default mode for a request whose `url` is
    /// known, leaving stored bodies of at least `minimumSize` bytes in their files when the store
    /// has verified them (``CacheResponse/Content/storedFile(_:range:)``).
    ///
    /// A fresh answer to a request that asks nothing of it (no precondition; a `Range` only when
    /// it is one range of a body sent from its file) is offered to `sharing` first
    /// (``AnswerOffer``). When `sharing` returns `true` the caller sends what it holds: the hit
    /// is counted and recorded, and neither head nor body is built.
    ///
    /// Unlike ``storedResponse(for:mode:)`` it never waits for the index writer: while a new
    /// entry for the URL is on its way into the index it returns `nil`, and the caller's
    /// asynchronous path (``streamingResponse(for:body:mode:interim:followRedirects:)``) suspends until the entry
    /// is in, leaving the event loop to its other connections.
    package func storedAnswer(
        for request: HTTPRequest, url: URL, bodyFilesFrom minimumSize: Int?,
        sharing: (AnswerOffer) -> Bool
    ) -> StoredAnswer? {
        guard request.method == .get || request.method == .head,
            let step = withoutActuallyEscaping(
                sharing,
                do: { sharing in
                    try? plan(request, url: url, mode: .default, bodyFilesFrom: minimumSize, sharing: sharing)
                })
        else { return nil }
        switch step {
        case .answer(let response):
            count { $0.requests += 1 }
            return .built(response)
        case .answeredBefore(let terms, let offer):
            count { $0.requests += 1 }
            return .shared(terms, offer)
        case .entryOnItsWay:
            return nil
        default:
            return .origin(OriginTrip(step: step))
        }
    }

    /// What ``storedAnswer(for:url:bodyFilesFrom:sharing:)`` gives.
    package enum StoredAnswer {
        /// A response built as ``storedResponse(for:mode:)`` builds it.
        case built(CacheResponse)
        /// The answer the caller holds for the offer it took, under these terms.
        case shared(ReplayTerms, AnswerOffer)
        /// The answer needs the origin, for the reason this trip holds: the caller's
        /// asynchronous path takes it without deciding again.
        case origin(OriginTrip)
    }

    /// A trip to the origin (a miss, a revalidation, the rest of a stored part, a request the
    /// rules pass through) decided by ``storedAnswer(for:url:bodyFilesFrom:sharing:)``, handed to
    /// ``streamingResponse(for:url:body:mode:interim:trip:)`` so that the request is not looked
    /// up and decided a second time a few microseconds later. Taken a moment after it was
    /// decided, it acts as a request that came that moment earlier would (the engine already
    /// handles concurrent requests for one key: joined fetches, replaced entries).
    package struct OriginTrip: Sendable {
        fileprivate let step: Step
    }

    /// One hop: the request path of the type's documentation.
    nonisolated(nonsending) func respond(
        to request: HTTPRequest, url: URL? = nil, body: Data?, bodyStream: RequestBodyStream? = nil,
        mode: RequestMode, interim: InterimResponseHandler? = nil, trip: OriginTrip? = nil,
        bodyStreamsFrom streamedSize: Int? = nil
    ) async throws -> CacheResponse {
        count { $0.requests += 1 }
        let policy = self.policy
        let step: Step
        if let trip, mode == .default {
            step = trip.step
        } else {
            step = try await planAfterEntriesOnTheirWay(request, url: url, mode: mode, bodyStreamsFrom: streamedSize)
        }
        switch step {
        case .answer(let response):
            return response
        case .answeredBefore, .entryOnItsWay:
            // Never: only storedAnswer(…) plans with encodings to share, and entries on their
            // way were waited for.
            return try await respond(
                to: request, url: url, body: body, bodyStream: bodyStream, mode: mode, interim: interim,
                bodyStreamsFrom: streamedSize)
        case .passThrough(let url, let detail):
            count { $0.bypassed += 1 }
            return try await passThrough(
                request, body: body, bodyStream: bodyStream, url: url, detail: detail, interim: interim)
        case .forwardUnsafe(let url):
            count { $0.bypassed += 1 }
            return try await forwardUnsafe(request, body: body, bodyStream: bodyStream, url: url, interim: interim)
        case .fetch(let outgoing, let key, let url, let forward):
            count { $0.misses += 1 }
            let response = try await fetchAndRespond(
                outgoing, key: key, url: url, forward: forward, policy: policy, interim: interim
            ) { [self] in
                // Decided again once the fetch it joined is stored: a hit (counted as one) for
                // the request as the client sent it.
                // fetchAndRespond waited for its entry to reach the index first.
                guard
                    case .answer(let stored)? = try? plan(
                        request, url: url, mode: mode, entryOnItsWay: .ignore)
                else { return nil }
                return stored
            }
            // Answered from the store after all: counted as the hit it is, not as a miss.
            if response.isFromCache { count { $0.misses -= 1 } }
            return response
        case .revalidate(let entry, let url, let decision):
            count { $0.revalidations += 1 }
            return try await revalidate(entry, request: request, url: url, decision: decision, policy: policy)
        case .completePart(let entry, let part, let key, let url):
            count { $0.misses += 1 }
            return try await completeAndRespond(
                request, entry: entry, part: part, key: key, url: url, policy: policy, interim: interim)
        }
    }

    /// ``plan(_:url:mode:bodyFilesFrom:bodyStreamsFrom:sharing:entryOnItsWay:)``, suspending while a new entry
    /// for the request's key is on its way into the index: twice at most (a key stored again and
    /// again meanwhile), each time for the store's patience at most (an index writer stuck on a
    /// hung disk must not hold requests forever); then decided on what the index holds.
    func planAfterEntriesOnTheirWay(
        _ request: HTTPRequest, url: URL?, mode: RequestMode, bodyStreamsFrom streamedSize: Int? = nil
    ) async throws -> Step {
        for _ in 0..<2 {
            let step = try plan(request, url: url, mode: mode, bodyStreamsFrom: streamedSize)
            guard case .entryOnItsWay(let key) = step else { return step }
            guard await store.entryOnItsWayWritten(key) else {
                storeProblem(
                    "the index has not taken \(key)'s new entry after \(CacheStore.entryOnItsWayPatience); deciding without it"
                )
                break
            }
        }
        return try plan(request, url: url, mode: mode, bodyStreamsFrom: streamedSize, entryOnItsWay: .ignore)
    }

    /// Decides what answering `request` takes; answers from the store are made here (and counted
    /// as hits, stale answers or blocks), trips to the origin are left to the caller. While a new
    /// entry for the key is on its way into the index, what `entryOnItsWay` says: by default
    /// ``Step/entryOnItsWay(_:)``.
    func plan(
        _ request: HTTPRequest, url knownURL: URL? = nil, mode: RequestMode, bodyFilesFrom minimumSize: Int? = nil,
        bodyStreamsFrom streamedSize: Int? = nil, sharing: ((AnswerOffer) -> Bool)? = nil,
        entryOnItsWay: CacheStore.EntryOnItsWay = .report
    ) throws -> Step {
        let settings = settingsInForce
        let policy = settings.policy
        guard let url = knownURL ?? request.url, HTTPURLs.isHTTP(url),
            let key = CacheKey(method: .get, url: url)
        else {
            throw CacheError(
                .invalidRequest,
                "\(request.url?.absoluteString ?? "a request without a URL") is not an absolute http(s) URL")
        }
        if policy.enabled && policy.blocks(url) {
            count { $0.blocked += 1 }
            return .answer(blockedResponse(url: url))
        }
        guard policy.allows(request, url: url) else {
            return .passThrough(url: url, detail: policy.enabled ? "not-allowed" : "disabled")
        }
        guard request.method == .get || request.method == .head else {
            return .forwardUnsafe(url: url)
        }
        if mode == .reload || mode == .reloadIgnoringRemoteCaches {
            var outgoing = request
            if mode == .reloadIgnoringRemoteCaches {
                outgoing.headerFields[.cacheControl] = "no-cache"
                outgoing.headerFields[.pragma] = "no-cache"
            }
            return .fetch(outgoing, key: key, url: url, forward: .request)
        }

        let candidates: [CacheEntry]
        let storeRevision: UInt64?
        do {
            guard let found = try store.lookupWithRevision(key, entryOnItsWay: entryOnItsWay) else {
                return .entryOnItsWay(key)
            }
            (candidates, storeRevision) = found
        } catch {
            storeProblem("cache lookup failed for \(key), going to the network: \(error)")
            (candidates, storeRevision) = ([], nil)
        }
        guard let entry = select(candidates, for: request, rules: rules) else {
            if mode == .onlyCache || rules.directives(for: request).onlyIfCached {
                return .answer(gatewayTimeout(url: url))
            }
            return .fetch(request, key: key, url: url, forward: candidates.isEmpty ? .uriMiss : .varyMiss)
        }

        let now = clock()
        let decision = decide(entry, request: request, mode: mode, now: now)
        if entry.stored.response.status.code == 206 {
            guard let part = rules.storablePart(of: entry.stored.response) else {
                return .fetch(request, key: key, url: url, forward: .partial)
            }
            if let step = planForPart(
                entry, part: part, request: request, key: key, url: url, mode: mode, decision: decision)
            {
                return step
            }
        }
        switch decision.action {
        case .useFresh:
            if let sharing, mode == .default, let storeRevision,
                let shared = shareableAnswer(
                    entry, request: request, url: url, now: now, storeRevision: storeRevision,
                    bodyFilesFrom: minimumSize, settings: settings, sharing: sharing)
            {
                return shared
            }
            guard
                var response = serveStored(
                    entry, request: request, url: url, now: now, detail: nil, policy: policy, decision: decision,
                    bodyFilesFrom: minimumSize, bodyStreamsFrom: streamedSize)
            else {
                return .fetch(request, key: key, url: url, forward: .miss)
            }
            if mode == .default, let storeRevision, response.storedFile.map({ $0.range == 0..<entry.bodySize }) ?? true
            {
                response.replayTerms = replayTerms(
                    of: response, entry: entry, storeRevision: storeRevision, now: now, settings: settings)
            }
            return .answer(response)
        case .useStale(let reason):
            let detail: String
            switch reason {
            case .staleWhileRevalidate: detail = "stale-while-revalidate"
            case .maxStale: detail = mode == .default ? "max-stale" : mode.rawValue
            case .disconnected: detail = "offline"
            }
            guard
                let response = serveStored(
                    entry, request: request, url: url, now: now, detail: detail, policy: policy, decision: decision,
                    bodyFilesFrom: minimumSize, bodyStreamsFrom: streamedSize)
            else {
                return .fetch(request, key: key, url: url, forward: .miss)
            }
            if reason == .staleWhileRevalidate {
                revalidateInBackground(entry, request: request, url: url, policy: policy)
            }
            count { $0.staleServed += 1 }
            return .answer(response)
        case .gatewayTimeout:
            return .answer(gatewayTimeout(url: url))
        case .fetch:
            return .fetch(request, key: key, url: url, forward: .miss)
        case .validate:
            return .revalidate(entry, url: url, decision: decision)
        }
    }

    /// The stored variant `request` selects (RFC 9111 §4.1).
    func select(_ candidates: [CacheEntry], for request: HTTPRequest, rules: CacheRules) -> CacheEntry? {
        guard !candidates.isEmpty else { return nil }
        if candidates.count == 1 {
            return entryFacts.facts(of: candidates[0], rules: rules).variantMatches(request) ? candidates[0] : nil
        }
        guard let chosen = rules.selectVariant(from: candidates.map(\.stored), for: request) else { return nil }
        return candidates.first { $0.stored == chosen }
    }

    /// The RFC decision, adjusted by the request mode and the app-set expiry.
    func decide(
        _ entry: CacheEntry, request: HTTPRequest, mode: RequestMode, now: Date
    ) -> ReuseDecision {
        var decision = rules.reuse(
            entry.stored, facts: entryFacts.facts(of: entry, rules: rules), for: request, now: now)
        if decision.action == .fetch { return decision }
        switch mode {
        case .preferCache, .onlyCache:
            if !decision.servesStored {
                decision.action = .useStale(.maxStale)
                decision.addReason("\(mode.rawValue) mode accepts any staleness")
            }
            return decision
        case .revalidate:
            decision.action = .validate
            decision.addReason("revalidate mode")
            return decision
        case .default, .reload, .reloadIgnoringRemoteCaches:
            break
        }
        if let appExpiry = entry.appExpiry, rules.directives(for: request).noCache == nil {
            let left = WholeSeconds.roundedDown(appExpiry.timeIntervalSince(now))
            if left > 0 {
                decision.action = .useFresh
                decision.staleness = -left
                decision.addReason("app-set lifetime: fresh for \(left) s more")
            } else if decision.action == .useFresh {
                decision.action = .validate
                decision.staleness = -left
                decision.addReason("app-set lifetime ended \(-left) s ago: validate")
            }
        }
        return decision
    }
}
