import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the reuse rules read from a stored response that does not change while it stays stored:
/// its directives, freshness lifetime, the time-independent part of its age, and its `Vary`.
///
/// Working these out means parsing `Cache-Control`, `Date`, `Expires`, `Age` and `Vary`; a cache
/// that serves the same response many times works them out once
/// (``CacheRules/facts(of:)``) and passes them to
/// ``CacheRules/reuse(_:facts:for:now:conditions:)``. Facts belong to the rules that made them
/// and to one stored response: a response updated by a 304 needs new facts.
public struct StoredFacts: Sendable, Hashable {
    /// The response's effective caching directives (targeted field or `Cache-Control`).
    public var directives: CacheControl
    /// The freshness lifetime (RFC 9111 §4.2.1).
    public var freshness: Freshness
    /// `corrected_initial_age` (RFC 9111 §4.2.3).
    public var correctedInitialAge: TimeInterval
    /// When the response was received; the age grows from here.
    public var responseTime: Date
    /// The response's `Vary`.
    public var vary: VarySpecifier
    /// The secondary key of the stored request (empty when the response names no fields).
    public var storedVaryKey: VaryKey
    /// The response's `Content-Language`, which can select it for a request whose
    /// `Accept-Language` differs from the stored request's.
    public var contentLanguage: String?

    /// The age at `now` in whole seconds.
    public func age(at now: Date) -> Int {
        CacheRules.wholeSeconds(correctedInitialAge + max(0, now.timeIntervalSince(responseTime)))
    }

    /// The first instant after `now` at which ``age(at:)`` is no longer what it is at `now`:
    /// until then every reuse decision on these facts, which reads the age in whole seconds
    /// only, comes out the same. `distantFuture` once the age has reached its ceiling.
    public func ageChanges(after now: Date) -> Date {
        let age = correctedInitialAge + max(0, now.timeIntervalSince(responseTime))
        guard age.isFinite, age < Double(DeltaSeconds.maximum) else { return .distantFuture }
        let next = max(0, age).rounded(.down) + 1
        return responseTime.addingTimeInterval(next - correctedInitialAge)
    }

    /// Whether the stored response may answer a request with these header fields (RFC 9111 §4.1).
    public func variantMatches(_ request: HTTPRequest) -> Bool {
        CacheRules.variantMatches(vary, storedKey: storedVaryKey, request: request, contentLanguage: contentLanguage)
    }
}

extension CacheRules {
    /// The facts of `stored` under these rules.
    public func facts(of stored: StoredResponse) -> StoredFacts {
        let vary = VarySpecifier(stored.response.headerFields)
        return StoredFacts(
            directives: directives(for: stored.response).cacheControl,
            freshness: freshness(of: stored),
            correctedInitialAge: age(of: stored, now: stored.responseTime).correctedInitialAge,
            responseTime: stored.responseTime,
            vary: vary,
            storedVaryKey: VaryKey(vary, request: stored.request.headerFields),
            contentLanguage: stored.response.headerFields.value(.contentLanguage))
    }
}
