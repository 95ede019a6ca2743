import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheRules {
    /// Methods whose semantics are safe (RFC 9110 §9.2.1); every other method, known or not,
    /// is treated as unsafe.
    public static let safeMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .trace]

    /// The URIs whose stored responses must be invalidated after `response` to `request`
    /// (RFC 9111 §4.4): for an unsafe method and a non-error (2xx/3xx) status, the target URI and
    /// the `Location` and `Content-Location` URIs when they share its origin.
    public func invalidations(for request: HTTPRequest, response: HTTPResponse) -> [URL] {
        guard !Self.safeMethods.contains(request.method),
            (200..<400).contains(response.status.code),
            let target = request.url
        else { return [] }
        var uris = [target]
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = response.headerFields.value(name), !value.isEmpty,
                let resolved = URLReference.resolve(value, against: target),
                URLReference.sameOrigin(resolved, target),
                !uris.contains(where: { URLReference.sameResource($0, resolved) })
            else { continue }
            uris.append(resolved)
        }
        return uris
    }
}
