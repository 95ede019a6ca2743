import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheRules {
    /// Whether a stored response can be selected for `request` by its `Vary` (RFC 9111 §4.1).
    public func variantMatches(_ stored: StoredResponse, request: HTTPRequest) -> Bool {
        let specifier = VarySpecifier(stored.response.headerFields)
        return Self.variantMatches(specifier, storedKey: VaryKey(specifier, request: stored.request.headerFields), request: request)
    }

    /// The rule of ``variantMatches(_:request:)`` once the stored response's `Vary` and its
    /// request's key are known: always without `Vary`, never with `*`, else equal keys.
    static func variantMatches(_ specifier: VarySpecifier, storedKey: @autoclosure () -> VaryKey, request: HTTPRequest) -> Bool {
        switch specifier {
        case .none: return true
        case .any: return false
        case .fields: return storedKey() == VaryKey(specifier, request: request.headerFields)
        }
    }

    /// The most recent stored response that matches `request` (RFC 9111 §4.1: by `Date`, then by
    /// when it was received).
    public func selectVariant(from candidates: [StoredResponse], for request: HTTPRequest) -> StoredResponse? {
        candidates.filter { variantMatches($0, request: request) }
            .max { lhs, rhs in
                let (lDate, rDate) = (dateValue(of: lhs), dateValue(of: rhs))
                return lDate != rDate ? lDate < rDate : lhs.responseTime < rhs.responseTime
            }
    }
}
