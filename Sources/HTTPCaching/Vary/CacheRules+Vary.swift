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
        return Self.variantMatches(
            specifier, storedKey: VaryKey(specifier, request: stored.request.headerFields), request: request,
            contentLanguage: stored.response.headerFields.value(.contentLanguage))
    }

    /// The rule of ``variantMatches(_:request:)`` once the stored response's `Vary` and its
    /// request's key are known: always without `Vary`, never with `*`, else equal keys — or keys
    /// that differ only in `Accept-Language` when the stored response's `Content-Language` is
    /// what the new request prefers most (the variant a server would choose for it).
    static func variantMatches(
        _ specifier: VarySpecifier, storedKey: @autoclosure () -> VaryKey, request: HTTPRequest,
        contentLanguage: String?
    ) -> Bool {
        switch specifier {
        case .none: return true
        case .any: return false
        case .fields(let names):
            let stored = storedKey()
            let current = VaryKey(specifier, request: request.headerFields)
            if stored == current { return true }
            guard let contentLanguage, let position = names.firstIndex(of: .acceptLanguage) else { return false }
            let storedLines = stored.text.split(separator: "\n", omittingEmptySubsequences: false)
            let currentLines = current.text.split(separator: "\n", omittingEmptySubsequences: false)
            guard storedLines.count == names.count, currentLines.count == names.count,
                storedLines.indices.allSatisfy({ $0 == position || storedLines[$0] == currentLines[$0] })
            else { return false }
            let languages = contentLanguage.split(separator: ",").map { String($0.trimmingHTTPWhitespace()) }
            let preferences = LanguagePreference.parse(
                request.headerFields[values: .acceptLanguage].joined(separator: ",").split(separator: ","))
            return LanguagePreference.prefers(languages, under: preferences)
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
