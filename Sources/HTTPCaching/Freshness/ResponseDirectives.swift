import HTTPTypes

/// The caching directives that govern a response for one cache: either its `Cache-Control`
/// (with `Expires`), or — for a cache with a target list — the first valid targeted field, in
/// which case `Cache-Control` and `Expires` are ignored (RFC 9213 §2.2).
public struct ResponseDirectives: Sendable, Hashable {
    /// The directives in force.
    public var cacheControl: CacheControl
    /// The field they came from (`Cache-Control` or a targeted field).
    public var source: HTTPField.Name
    /// Whether `Expires` may be consulted (false when a targeted field applies).
    public var usesExpires: Bool

    /// Whether the directives come from a targeted field such as `CDN-Cache-Control`.
    public var isTargeted: Bool { source != .cacheControl }
}

extension CacheRules {
    /// The directives this cache obeys for `response`.
    public func directives(for response: HTTPResponse) -> ResponseDirectives {
        if !targetedFields.isEmpty,
            let targeted = TargetedCacheControl.select(from: response.headerFields, targets: targetedFields)
        {
            return ResponseDirectives(cacheControl: targeted.cacheControl, source: targeted.field, usesExpires: false)
        }
        return ResponseDirectives(
            cacheControl: CacheControl(fields: response.headerFields), source: .cacheControl, usesExpires: true)
    }

    /// The request's directives; `Pragma: no-cache` counts as `no-cache` when the request has no
    /// `Cache-Control` (RFC 9111 §5.4).
    public func directives(for request: HTTPRequest) -> CacheControl {
        let fields = request.headerFields
        let cacheControl = CacheControl(fields: fields)
        if !fields.contains(.cacheControl),
            fields.listMembers(.pragma).contains(where: { $0.lowercased() == "no-cache" })
        {
            return CacheControl(directives: [CacheDirective(name: "no-cache")])
        }
        return cacheControl
    }
}
