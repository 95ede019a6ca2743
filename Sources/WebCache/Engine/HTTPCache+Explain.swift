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
        var lines = ["request: \(request.method.rawValue) \(key.url) (\(configuration.rules.kind) cache)"]
        if !policy.enabled { lines.append("policy: the cache is disabled; requests pass through") }
        if policy.blocks(url) { lines.append("policy: blocked — answered with an empty response, never fetched"); return lines }
        if !policy.allows(request, url: url) { lines.append("policy: not on the allow-list — passes through uncached") }
        let candidates = try store.lookup(key)
        guard !candidates.isEmpty else {
            lines.append("stored: nothing — the next request goes to the origin")
            return lines
        }
        let now = configuration.now()
        for entry in candidates {
            let vary = entry.varyKey.isEmpty ? "" : " (variant \(entry.varyKey.replacingOccurrences(of: "\n", with: "; ")))"
            lines.append("stored: \(entry.stored.response.status.code), \(entry.bodySize) bytes, received \(HTTPDate.format(entry.stored.responseTime))\(vary)\(entry.group.map { ", group \($0)\(entry.isPinned ? " (pinned)" : "")" } ?? "")")
            if let expiry = entry.appExpiry { lines.append("  app-set expiry: \(HTTPDate.format(expiry))") }
        }
        guard let entry = select(candidates, for: request, rules: configuration.rules) else {
            lines.append("decision: no stored variant matches this request's \(VarySpecifier(candidates[0].stored.response.headerFields).names.map(\.rawName).joined(separator: ", ")) — fetch")
            return lines
        }
        let decision = decide(entry, request: request, mode: .default, now: now, configuration: configuration)
        lines.append("decision: \(decision.action) — \(decision)")
        if decision.action == .validate, let validators = configuration.rules.validatorSummary(for: entry.stored) {
            lines.append("  would send \(validators)")
        }
        if decision.mayServeStaleOnError { lines.append("  if the origin fails, the stored response may be served stale") }
        return lines
    }
}
