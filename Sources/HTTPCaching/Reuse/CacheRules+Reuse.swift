import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheRules {
    /// Decides whether `stored` can answer `request` at `now` (RFC 9111 §4, §4.2.4, §5.2;
    /// RFC 5861; RFC 8246).
    ///
    /// In order: only GET and HEAD are answered from a stored GET (or HEAD from HEAD); `Vary` must
    /// match; `no-cache` in the response or the request forces validation; a fresh response is
    /// used unless the request's `max-age` (ignored for `immutable`) or `min-fresh` asks for
    /// fresher; a stale one is used under `max-stale`, `stale-while-revalidate` or disconnected
    /// operation unless `must-revalidate` (or, in a shared cache, `proxy-revalidate` or
    /// `s-maxage`) forbids it; otherwise it is validated. `only-if-cached` turns "validate" into
    /// "504".
    public func reuse(
        _ stored: StoredResponse, for request: HTTPRequest, now: Date,
        conditions: ReuseConditions = .connected
    ) -> ReuseDecision {
        reuse(stored, facts: facts(of: stored), for: request, now: now, conditions: conditions)
    }

    /// ``reuse(_:for:now:conditions:)`` with the stored response's facts already worked out
    /// (``facts(of:)``), for a cache that serves the same response many times.
    public func reuse(
        _ stored: StoredResponse, facts: StoredFacts, for request: HTTPRequest, now: Date,
        conditions: ReuseConditions = .connected
    ) -> ReuseDecision {
        let freshness = facts.freshness
        let ageSeconds = facts.age(at: now)
        let staleness = ageSeconds - freshness.lifetime
        var decision = ReuseDecision(
            action: .fetch, freshness: freshness, age: ageSeconds, staleness: staleness,
            mayServeStaleOnError: false, reasons: [])

        guard request.method == .get || request.method == .head,
            stored.request.method == request.method || stored.request.method != .head
        else {
            decision.reasons = [
                "a stored \(stored.request.method.rawValue) response cannot answer \(request.method.rawValue)"
            ]
            return decision
        }
        guard facts.variantMatches(request) else {
            decision.reasons = [
                "Vary: the request's \(facts.vary.names.map(\.rawName).joined(separator: ", ")) differ from the stored request's (RFC 9111 §4.1)"
            ]
            return decision
        }

        let response = facts.directives
        let requestCC = directives(for: request)
        let forbidsStale =
            response.mustRevalidate
            || (kind.shared && (response.proxyRevalidate || response.sharedMaxAge != nil))
        let requiresValidation = response.noCache == .all
        decision.beginWithAge()
        decision.mayServeStaleOnError =
            !forbidsStale && !requiresValidation
            && staleIfErrorAllows(staleness: staleness, response: response, request: requestCC, conditions: conditions)

        if requiresValidation {
            return finish(
                &decision, .validate, "the response says no-cache: validate before every use (RFC 9111 §5.2.2.4)",
                requestCC)
        }
        if requestCC.noCache != nil {
            return finish(&decision, .validate, "the request says no-cache (RFC 9111 §5.2.1.4)", requestCC)
        }
        if staleness < 0 {
            if let maxAge = requestCC.maxAge, ageSeconds > (maxAge.seconds ?? 0) {
                if response.immutable {
                    decision.addReason(
                        "immutable: the request's max-age does not force validation while fresh (RFC 8246)")
                } else {
                    return finish(
                        &decision, .validate,
                        "older than the request's max-age=\(maxAge.seconds.map(String.init) ?? "invalid") (RFC 9111 §5.2.1.1)",
                        requestCC)
                }
            }
            if let minFresh = requestCC.minFresh, -staleness < (minFresh.seconds ?? Int.max) {
                return finish(
                    &decision, .validate, "fresh for less than the request's min-fresh (RFC 9111 §5.2.1.3)", requestCC)
            }
            decision.action = .useFresh
            return decision
        }

        if forbidsStale {
            let rule =
                response.mustRevalidate
                ? "must-revalidate (RFC 9111 §5.2.2.2)"
                : response.proxyRevalidate
                    ? "proxy-revalidate in a shared cache (RFC 9111 §5.2.2.8)"
                    : "s-maxage in a shared cache (RFC 9111 §5.2.2.10)"
            return finish(&decision, .validate, "stale and \(rule) forbids serving it unvalidated", requestCC)
        }
        if let maxStale = requestCC.maxStale, maxStale == .unlimited || staleness <= (maxStale.seconds ?? -1) {
            decision.addReason("the request's max-stale accepts it (RFC 9111 §5.2.1.2)")
            decision.action = .useStale(.maxStale)
            return decision
        }
        if let window = response.staleWhileRevalidate?.seconds, staleness < window,
            requestCC.maxAge == nil, requestCC.minFresh == nil
        {
            decision.addReason(
                "within stale-while-revalidate=\(window): serve and revalidate in the background (RFC 5861 §3)")
            decision.action = .useStale(.staleWhileRevalidate)
            return decision
        }
        if !conditions.originReachable {
            if staleness <= conditions.maxStaleWhenDisconnected ?? Int.max {
                decision.addReason("the origin is unreachable: serving stale (RFC 9111 §4.2.4)")
                decision.action = .useStale(.disconnected)
                return decision
            }
            decision.addReason(
                "the origin is unreachable but the response is staler than the \(conditions.maxStaleWhenDisconnected ?? 0) s allowed offline"
            )
        }
        return finish(&decision, .validate, "validate with the origin before use (RFC 9111 §4.3)", requestCC)
    }

    private func finish(
        _ decision: inout ReuseDecision, _ action: ReuseDecision.Action, _ reason: String, _ request: CacheControl
    ) -> ReuseDecision {
        decision.addReason(reason)
        if request.onlyIfCached {
            decision.action = .gatewayTimeout
            decision.addReason("only-if-cached: answer 504 instead of contacting the origin (RFC 9111 §5.2.1.7)")
        } else {
            decision.action = action
        }
        return decision
    }

    private func staleIfErrorAllows(
        staleness: Int, response: CacheControl, request: CacheControl, conditions: ReuseConditions
    ) -> Bool {
        for window in [response.staleIfError, request.staleIfError] {
            if let seconds = window?.seconds, staleness <= seconds { return true }
        }
        if !conditions.originReachable {
            return staleness <= conditions.maxStaleWhenDisconnected ?? Int.max
        }
        return false
    }

    /// The seconds `stored` stays fresh after `now`, negative once stale: the `ttl` of
    /// RFC 9211's `Cache-Status`, the opposite of ``ReuseDecision/staleness`` as
    /// ``reuse(_:for:now:conditions:)`` works it out, without reading a request or the rest of
    /// the stored response's facts (a miss's status is told once, where facts serve many hits).
    public func freshnessLeft(of stored: StoredResponse, at now: Date) -> Int {
        freshness(of: stored).lifetime - Self.wholeSeconds(age(of: stored, now: now).currentAge)
    }

    /// An age in whole seconds: 0 for none, a negative or an infinite one, capped as
    /// delta-seconds are.
    static func wholeSeconds(_ interval: TimeInterval) -> Int {
        interval.isFinite ? max(0, WholeSeconds.roundedDown(interval)) : 0
    }

    static func describeAge(freshness: Freshness, age: Int, staleness: Int) -> String {
        staleness < 0
            ? "fresh for \(-staleness) s more (\(freshness), age \(age) s)"
            : "stale by \(staleness) s (\(freshness), age \(age) s)"
    }
}
