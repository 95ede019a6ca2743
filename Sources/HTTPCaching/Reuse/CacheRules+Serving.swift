import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheRules {
    /// The stored response head as it goes out at `now`: with `Age` set to the current age
    /// (RFC 9111 §5.1, §4.2.3) and without hop-by-hop fields. `Date` is left untouched.
    public func headForServing(_ stored: StoredResponse, now: Date) -> HTTPResponse {
        headForServing(stored, age: Self.wholeSeconds(age(of: stored, now: now).currentAge))
    }

    /// The stored response head as it goes out when its current age (in whole seconds) is
    /// already known, e.g. from ``ReuseDecision/age``.
    public func headForServing(_ stored: StoredResponse, age: Int) -> HTTPResponse {
        var response = stored.response
        var fields = MessageFields.removingHopByHop(response.headerFields)
        fields[.age] = String(age)
        response.headerFields = fields
        return response
    }
}
