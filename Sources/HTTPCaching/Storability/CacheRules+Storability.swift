import HTTPTypes

extension CacheRules {
    /// Whether `response`, received for `request`, may be stored (RFC 9111 §3).
    ///
    /// Refused: methods other than GET and HEAD (and POST without explicit freshness and a
    /// `Content-Location` equal to the target, RFC 9110 §9.3.3); non-final and 304 responses; a
    /// 206 other than one byte range of a known length answering a GET with `Range` (§3.3); `no-store` in the request or the governing directives (unless `must-understand`
    /// with an understood status, §5.2.2.3); an unknown status under `must-understand`;
    /// unqualified `private` in a shared cache; a request with `Authorization` in a shared cache
    /// unless `public`, `must-revalidate` or `s-maxage` allow it (§3.5); `Vary: *`; and a
    /// response with no explicit freshness, no heuristically cacheable status and no `public`.
    public func storability(of response: HTTPResponse, for request: HTTPRequest) -> Storability {
        storability(of: response, for: request, directives: directives(for: response))
    }

    /// ``storability(of:for:)`` with the response's directives already parsed
    /// (`directives(for:)` of the response), for a caller that needs them again.
    package func storability(
        of response: HTTPResponse, for request: HTTPRequest, directives: ResponseDirectives
    ) -> Storability {
        let status = response.status.code
        let cc = directives.cacheControl
        let requestDirectives = self.directives(for: request)
        let source = directives.isTargeted ? " in \(directives.source.rawName)" : ""

        switch request.method {
        case .get, .head:
            break
        case .post:
            guard hasExplicitExpiration(response, directives), contentLocationMatchesTarget(response, request) else {
                return .refused(
                    "POST responses are stored only with explicit freshness and a Content-Location equal to the target URI (RFC 9110 §9.3.3)"
                )
            }
        default:
            return .refused("\(request.method.rawValue) responses are not cacheable (RFC 9111 §3)")
        }
        guard status >= 200 else { return .refused("\(status) is not a final response (RFC 9111 §3)") }
        guard status != 304 else {
            return .refused("304 updates a stored response; it is not stored itself (RFC 9111 §4.3.4)")
        }
        if status == 206 {
            guard request.method == .get, request.headerFields.contains(.range), storablePart(of: response) != nil
            else {
                return .refused(
                    "partial content (206) is stored only as one byte range of a known length, for a GET with Range (RFC 9111 §3.3)"
                )
            }
        }

        var reasons: [String] = []
        if cc.mustUnderstand {
            guard understoodStatusCodes.contains(status) else {
                return .refused(
                    "must-understand\(source) with status \(status), which this cache does not implement (RFC 9111 §5.2.2.3)"
                )
            }
            reasons.append("must-understand with an understood status overrides no-store (RFC 9111 §5.2.2.3)")
        } else if cc.noStore {
            return .refused("no-store\(source) (RFC 9111 §5.2.2.5)")
        }
        if requestDirectives.noStore {
            return .refused("request has no-store (RFC 9111 §5.2.1.5)")
        }
        var omitted: Set<HTTPField.Name> = []
        if case .fields(let names) = cc.noCache { omitted.formUnion(names.compactMap { HTTPField.Name($0) }) }
        if kind.shared, let privateScope = cc.private {
            switch privateScope {
            case .all: return .refused("private\(source) in a shared cache (RFC 9111 §5.2.2.7)")
            case .fields(let names): omitted.formUnion(names.compactMap { HTTPField.Name($0) })
            }
        }
        if kind.shared, request.headerFields.contains(.authorization) {
            guard cc.public || cc.mustRevalidate || cc.sharedMaxAge != nil else {
                return .refused(
                    "request carries Authorization and the response lacks public, must-revalidate or s-maxage (RFC 9111 §3.5)"
                )
            }
            reasons.append("Authorization allowed by public, must-revalidate or s-maxage (RFC 9111 §3.5)")
        }
        if VarySpecifier(response.headerFields) == .any {
            return .refused("Vary: * never matches a later request (RFC 9111 §4.1)")
        }

        if hasExplicitExpiration(response, directives) {
            reasons.append("explicit freshness")
        } else if cc.public {
            reasons.append("public")
        } else if !kind.shared && cc.private != nil {
            reasons.append("private, in a private cache")
        } else if Self.heuristicallyCacheableStatusCodes.contains(status) {
            reasons.append("status \(status) is heuristically cacheable (RFC 9110 §15.1)")
        } else {
            return .refused(
                "status \(status) has no explicit freshness and is not heuristically cacheable (RFC 9111 §3)")
        }
        return Storability(isStorable: true, reasons: reasons, fieldsToOmit: omitted)
    }

    /// The response head as it should be stored: without hop-by-hop and proxy-only fields,
    /// without fields listed in `Connection`, and without fields the directives exclude.
    public func headForStorage(_ response: HTTPResponse, storability: Storability) -> HTTPResponse {
        var stored = response
        let excluded = storability.fieldsToOmit
        let storable = MessageFields.removingUnstorable(response.headerFields)
        // Most responses exclude nothing more: they are stored without a second pass (and
        // without hashing each name to look it up in an empty set).
        guard !excluded.isEmpty || storable.contains(.cacheStatus) else {
            stored.headerFields = storable
            return stored
        }
        stored.headerFields = storable.filtering { !excluded.contains($0.name) && $0.name != .cacheStatus }
        return stored
    }

    func hasExplicitExpiration(_ response: HTTPResponse, _ directives: ResponseDirectives) -> Bool {
        let cc = directives.cacheControl
        return cc.maxAge != nil || (kind.shared && cc.sharedMaxAge != nil)
            || (directives.usesExpires && response.headerFields.contains(.expires))
    }

    private func contentLocationMatchesTarget(_ response: HTTPResponse, _ request: HTTPRequest) -> Bool {
        guard let target = request.url, let value = response.headerFields.value(.contentLocation) else { return false }
        if value.isEmpty { return true }  // an empty reference resolves to the target itself
        return URLReference.resolve(value, against: target).map { URLReference.sameResource($0, target) } ?? false
    }
}
