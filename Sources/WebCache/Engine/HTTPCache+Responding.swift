import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// One hop: the request path of the type's documentation.
    func respond(to request: HTTPRequest, body: Data?, mode: RequestMode) async throws -> CacheResponse {
        let configuration = self.configuration
        let policy = configuration.policy
        count { $0.requests += 1 }
        guard let url = request.url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let key = CacheKey(method: .get, url: url)
        else {
            throw CacheError(.invalidRequest, "\(request.url?.absoluteString ?? "a request without a URL") is not an absolute http(s) URL")
        }
        if policy.enabled && policy.blocks(url) {
            count { $0.blocked += 1 }
            return blockedResponse(url: url, configuration: configuration)
        }
        guard policy.allows(request, url: url) else {
            count { $0.bypassed += 1 }
            return try await passThrough(request, body: body, url: url, detail: policy.enabled ? "not-allowed" : "disabled")
        }
        guard request.method == .get || request.method == .head else {
            count { $0.bypassed += 1 }
            return try await forwardUnsafe(request, body: body, url: url)
        }
        if mode == .reload || mode == .reloadIgnoringRemoteCaches {
            var outgoing = request
            if mode == .reloadIgnoringRemoteCaches {
                outgoing.headerFields[.cacheControl] = "no-cache"
                outgoing.headerFields[.pragma] = "no-cache"
            }
            count { $0.misses += 1 }
            return try await fetchAndRespond(outgoing, key: key, url: url, forward: .request, policy: policy)
        }

        let candidates: [CacheEntry]
        do {
            candidates = try store.lookup(key)
        } catch {
            logger.warning("cache lookup failed for \(key), going to the network: \(error)")
            candidates = []
        }
        let rules = configuration.rules
        let requestDirectives = rules.directives(for: request)
        guard let entry = select(candidates, for: request, rules: rules) else {
            if mode == .onlyCache || requestDirectives.onlyIfCached {
                return gatewayTimeout(url: url, configuration: configuration)
            }
            count { $0.misses += 1 }
            return try await fetchAndRespond(request, key: key, url: url, forward: candidates.isEmpty ? .uriMiss : .varyMiss, policy: policy)
        }

        let now = configuration.now()
        let decision = decide(entry, request: request, mode: mode, now: now, configuration: configuration)
        switch decision.action {
        case .useFresh:
            return try await serveStoredOrRefetch(entry, request: request, url: url, now: now, detail: nil, policy: policy, decision: decision)
        case .useStale(let reason):
            if reason == .staleWhileRevalidate { revalidateInBackground(entry, request: request, url: url, policy: policy) }
            count { $0.staleServed += 1 }
            let detail: String
            switch reason {
            case .staleWhileRevalidate: detail = "stale-while-revalidate"
            case .maxStale: detail = mode == .default ? "max-stale" : mode.rawValue
            case .disconnected: detail = "offline"
            }
            return try await serveStoredOrRefetch(entry, request: request, url: url, now: now, detail: detail, policy: policy, decision: decision)
        case .gatewayTimeout:
            return gatewayTimeout(url: url, configuration: configuration)
        case .fetch:
            count { $0.misses += 1 }
            return try await fetchAndRespond(request, key: key, url: url, forward: .miss, policy: policy)
        case .validate:
            count { $0.revalidations += 1 }
            return try await revalidate(entry, request: request, url: url, decision: decision, policy: policy)
        }
    }

    /// The stored variant `request` selects (RFC 9111 §4.1).
    func select(_ candidates: [CacheEntry], for request: HTTPRequest, rules: CacheRules) -> CacheEntry? {
        guard !candidates.isEmpty else { return nil }
        if candidates.count == 1 {
            return rules.variantMatches(candidates[0].stored, request: request) ? candidates[0] : nil
        }
        guard let chosen = rules.selectVariant(from: candidates.map(\.stored), for: request) else { return nil }
        return candidates.first { $0.stored == chosen }
    }

    /// The RFC decision, adjusted by the request mode and the app-set expiry.
    func decide(
        _ entry: CacheEntry, request: HTTPRequest, mode: RequestMode, now: Date, configuration: Configuration
    ) -> ReuseDecision {
        let rules = configuration.rules
        var decision = rules.reuse(entry.stored, for: request, now: now)
        if decision.action == .fetch { return decision }
        switch mode {
        case .preferCache, .onlyCache:
            if !decision.servesStored {
                decision.action = .useStale(.maxStale)
                decision.reasons.append("\(mode.rawValue) mode accepts any staleness")
            }
            return decision
        case .revalidate:
            decision.action = .validate
            decision.reasons.append("revalidate mode")
            return decision
        case .default, .reload, .reloadIgnoringRemoteCaches:
            break
        }
        if let appExpiry = entry.appExpiry, rules.directives(for: request).noCache == nil {
            let left = Int(appExpiry.timeIntervalSince(now).rounded(.down))
            if left > 0 {
                decision.action = .useFresh
                decision.staleness = -left
                decision.reasons.append("app-set lifetime: fresh for \(left) s more")
            } else if decision.action == .useFresh {
                decision.action = .validate
                decision.staleness = -left
                decision.reasons.append("app-set lifetime ended \(-left) s ago: validate")
            }
        }
        return decision
    }
}
