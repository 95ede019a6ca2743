import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// What is stored for `request` and what the cache would do with it now, in words, without
    /// touching the network.
    public func explain(_ request: HTTPRequest) throws -> [String] {
        let configuration = self.configuration
        let policy = configuration.policy
        guard let url = request.url, let key = CacheKey(method: .get, url: url) else {
            return ["\(request.url?.absoluteString ?? "?") is not an absolute http(s) URL"]
        }
        var lines = ["request: \(request.method.rawValue) \(key.url) (\(rules.kind) cache)"]
        if !policy.enabled { lines.append("policy: the cache is disabled; requests pass through") }
        if policy.blocks(url) {
            lines.append("policy: blocked — answered with an empty response, never fetched")
            return lines
        }
        if !policy.allows(request, url: url) { lines.append("policy: not on the allow-list — passes through uncached") }
        lines += reachabilityLines(for: url, now: clock())
        let candidates = try store.lookup(key)
        guard !candidates.isEmpty else {
            lines.append("stored: nothing — the next request goes to the origin")
            return lines
        }
        let now = clock()
        for entry in candidates {
            let vary =
                entry.varyKey.isEmpty ? "" : " (variant \(entry.varyKey.replacingOccurrences(of: "\n", with: "; ")))"
            lines.append(
                "stored: \(entry.stored.response.status.code), \(entry.bodySize) bytes, received \(HTTPDate.format(entry.stored.responseTime))\(vary)\(entry.group.map { ", group \($0)\(entry.isPinned ? " (pinned)" : "")" } ?? "")"
            )
            if let expiry = entry.appExpiry { lines.append("  app-set expiry: \(HTTPDate.format(expiry))") }
        }
        guard let entry = select(candidates, for: request, rules: rules) else {
            lines.append(
                "decision: no stored variant matches this request's \(VarySpecifier(candidates[0].stored.response.headerFields).names.map(\.rawName).joined(separator: ", ")) — fetch"
            )
            return lines
        }
        let decision = decide(entry, request: request, mode: .default, now: now)
        lines.append("decision: \(decision.action) — \(decision)")
        if decision.action == .validate, let validators = rules.validatorSummary(for: entry.stored) {
            lines.append("  would send \(validators)")
        }
        if decision.mayServeStaleOnError {
            lines.append("  if the origin fails, the stored response may be served stale")
        }
        if !decision.servesStored {
            let offline = offlineAnswerAllowed(entry, request: request, policy: policy, now: now)
            lines.append(
                "  offline (\(offlinePosture.rawValue) posture): \(offline ? "the stored response would be served" : "nothing usable would be served")"
            )
            if offline, let timeout = configuration.networkTimeout(under: policy) {
                lines.append(
                    "  if the origin is silent for \(timeout), the stored response is served and the fetch goes on in the background"
                )
            }
        }
        return lines
    }

    private func reachabilityLines(for url: URL, now: Date) -> [String] {
        guard let origin = OriginReachability.origin(of: url),
            let status = reachability.unreachable.first(where: { $0.origin == origin })
        else { return [] }
        let left = status.retryAfter.timeIntervalSince(now)
        let next =
            left > 0
            ? "requests skip it for \(String(format: "%.1f", left)) s more, then one probes it"
            : "the next request probes it"
        return [
            "origin: \(origin) unreachable since \(HTTPDate.format(status.unreachableSince)) (\(status.failures) failed connection\(status.failures == 1 ? "" : "s"): \(status.lastError)); \(next)"
        ]
    }
}
