import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheRules {
    /// The freshness lifetime of a stored response (RFC 9111 §4.2.1), with heuristics (§4.2.2).
    ///
    /// Order: `s-maxage` (shared caches only), then `max-age`, then `Expires − Date`; an invalid
    /// or contradictory value of the first one present makes the response stale. Without any,
    /// a heuristically cacheable status (or `public`) with `Last-Modified` gets
    /// ``HeuristicFreshness/fraction`` of its age, capped at ``HeuristicFreshness/maximum``.
    public func freshness(of stored: StoredResponse) -> Freshness {
        freshness(of: stored, directives: directives(for: stored.response))
    }

    /// ``freshness(of:)`` with the stored response's directives already parsed, for a caller
    /// that needs them again.
    package func freshness(of stored: StoredResponse, directives: ResponseDirectives) -> Freshness {
        let cc = directives.cacheControl
        let field = directives.isTargeted ? directives.source.rawName : nil
        if kind.shared, let sMaxAge = cc.sharedMaxAge {
            return explicit(sMaxAge, .sharedMaxAge, name: "s-maxage", field: field)
        }
        if let maxAge = cc.maxAge {
            return explicit(maxAge, .maxAge, name: "max-age", field: field)
        }
        let fields = stored.response.headerFields
        if directives.usesExpires, fields.contains(.expires) {
            let expiresValues = fields[values: .expires]
            guard Set(expiresValues).count == 1,
                let expires = HTTPDate.parse(expiresValues[0], now: stored.responseTime)
            else {
                // RFC 9111 §5.3: an invalid Expires (e.g. "0") means "already expired".
                return Freshness(
                    lifetime: 0, source: .invalid("invalid Expires \"\(expiresValues.joined(separator: ", "))\""))
            }
            let date = dateValue(of: stored)
            let lifetime = expires.timeIntervalSince(date)
            return Freshness(lifetime: Int(max(0, min(lifetime, Double(DeltaSeconds.maximum)))), source: .expires)
        }
        return heuristicFreshness(of: stored, directives: cc)
    }

    private func explicit(_ value: CacheControl.TimeValue, _ source: Freshness.Source, name: String, field: String?)
        -> Freshness
    {
        switch value {
        case .seconds(let seconds): return Freshness(lifetime: seconds, source: source, field: field)
        case .unlimited, .invalid:
            return Freshness(lifetime: 0, source: .invalid("invalid or repeated \(name)"), field: field)
        }
    }

    private func heuristicFreshness(of stored: StoredResponse, directives cc: CacheControl) -> Freshness {
        let status = stored.response.status.code
        guard Self.heuristicallyCacheableStatusCodes.contains(status) || cc.public,
            heuristic.fraction > 0, heuristic.maximum > 0,
            let lastModifiedText = stored.response.headerFields.value(.lastModified),
            let lastModified = HTTPDate.parse(lastModifiedText, now: stored.responseTime)
        else { return Freshness(lifetime: 0, source: .none) }
        let sinceModified = dateValue(of: stored).timeIntervalSince(lastModified)
        guard sinceModified > 0 else { return Freshness(lifetime: 0, source: .none) }
        let lifetime = min(sinceModified * heuristic.fraction, Double(heuristic.maximum))
        return Freshness(lifetime: Int(lifetime), source: .heuristic)
    }

    /// The response's `Date`, or the time it was received when `Date` is missing or invalid
    /// (RFC 9110 §6.6.1).
    public func dateValue(of stored: StoredResponse) -> Date {
        // The first line's value, found without an array of every line's.
        if let first = stored.response.headerFields.first(where: { $0.name == .date }),
            let date = HTTPDate.parse(first.value, now: stored.responseTime)
        {
            return date
        }
        return stored.responseTime
    }
}
