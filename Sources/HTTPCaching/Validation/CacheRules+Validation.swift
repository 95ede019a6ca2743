import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CacheRules {
    /// The request to send to validate stored responses (RFC 9111 §4.3.1).
    ///
    /// The client's request is kept (its `Vary`-selecting fields included), its own
    /// `If-None-Match`, `If-Modified-Since` and `If-Range` are replaced by the cache's validators:
    /// `If-None-Match` with every stored entity tag, or, when no stored response has one,
    /// `If-Modified-Since` with the `Last-Modified` of the most recent. Without any validator the
    /// request goes out unconditional.
    public func conditionalRequest(for request: HTTPRequest, revalidating stored: [StoredResponse]) -> HTTPRequest {
        var conditional = request
        var fields = MessageFields.removingHopByHop(request.headerFields)
        fields[.ifNoneMatch] = nil
        fields[.ifModifiedSince] = nil
        fields[.ifRange] = nil
        let tags = stored.flatMap { EntityTag.parseList($0.response.headerFields[values: .eTag]).prefix(1) }
        var unique: [EntityTag] = []
        for tag in tags where !unique.contains(tag) { unique.append(tag) }
        if !unique.isEmpty {
            fields[.ifNoneMatch] = unique.map(\.description).joined(separator: ", ")
        } else if let newest = stored.max(by: { $0.responseTime < $1.responseTime }),
            let lastModified = newest.response.headerFields.value(.lastModified),
            HTTPDate.parse(lastModified, now: newest.responseTime) != nil
        {
            fields[.ifModifiedSince] = lastModified
        }
        conditional.headerFields = fields
        return conditional
    }

    /// The validators a conditional request for `stored` would carry, in words
    /// (`If-None-Match: "abc"`), or `nil` when it would be unconditional.
    public func validatorSummary(for stored: StoredResponse) -> String? {
        let request = conditionalRequest(for: stored.request, revalidating: [stored])
        if let tags = request.headerFields.value(.ifNoneMatch) { return "If-None-Match: \(tags)" }
        if let date = request.headerFields.value(.ifModifiedSince) { return "If-Modified-Since: \(date)" }
        return nil
    }

    /// Whether a 304 answers for `stored` (RFC 9111 §4.3.4): its strong or weak entity tag
    /// matches the stored one, or — without an entity tag — its `Last-Modified` equals the stored
    /// one; a 304 with no validator at all applies to the response that was validated.
    public func notModified(_ notModified: HTTPResponse, appliesTo stored: StoredResponse) -> Bool {
        let fields = notModified.headerFields
        if let tag = EntityTag.parseList(fields[values: .eTag]).first {
            guard let storedTag = EntityTag.parseList(stored.response.headerFields[values: .eTag]).first else {
                return false
            }
            return tag.isWeak || storedTag.isWeak ? tag.weakMatches(storedTag) : tag.strongMatches(storedTag)
        }
        if let lastModified = fields.value(.lastModified).flatMap({ HTTPDate.parse($0) }) {
            return stored.response.headerFields.value(.lastModified).flatMap { HTTPDate.parse($0) } == lastModified
        }
        return true
    }

    /// Fields a 304 never replaces in a stored response (RFC 9111 §3.2): its body's length.
    public static let fieldsKeptOn304: Set<HTTPField.Name> = [.contentLength]

    /// The fields a 304 does not bring into the stored head: those kept from the stored response,
    /// and those never stored (worked out once: a page sent `no-cache` is refreshed on every use).
    private static let notTakenFrom304 = fieldsKeptOn304.union(MessageFields.neverStored)

    /// The stored response refreshed by a 304 (or by a 200 to a HEAD, RFC 9111 §4.3.5).
    ///
    /// RFC 9111 §3.2: every field of the new response replaces the stored field of that name,
    /// except hop-by-hop and `Connection`-listed fields, fields excluded by a qualified
    /// `no-cache` or (shared) `private`, and `Content-Length`. Fields the new response does not
    /// carry are kept — except `Age`, which described the old exchange. A 304 without `Date`
    /// gets its receipt time (RFC 9110 §6.6.1), so that the new exchange times apply.
    public func updating(
        _ stored: StoredResponse, with notModified: HTTPResponse, requestTime: Date, responseTime: Date
    ) -> StoredResponse {
        let newDirectives = directives(for: notModified).cacheControl
        var excluded = Self.notTakenFrom304
        let connectionListed = MessageFields.connectionListed(in: notModified.headerFields)
        if !connectionListed.isEmpty { excluded.formUnion(connectionListed) }
        if case .fields(let names) = newDirectives.noCache {
            excluded.formUnion(names.compactMap { HTTPField.Name($0) })
        }
        if kind.shared, case .fields(let names) = newDirectives.private {
            excluded.formUnion(names.compactMap { HTTPField.Name($0) })
        }
        let incoming = notModified.headerFields.filtering { !excluded.contains($0.name) }
        let replaced = Set(incoming.map(\.name)).union([.age, .date])
        var fields = stored.response.headerFields.filtering { !replaced.contains($0.name) }
        for field in incoming { fields.append(field) }
        if !incoming.contains(.date) { fields[.date] = HTTPDate.format(responseTime) }
        var updated = stored
        updated.response.headerFields = fields
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        return updated
    }

    /// Whether the client's own conditional request is satisfied by `stored`, so that the cache
    /// answers 304 instead of the full response (RFC 9111 §4.3.2, RFC 9110 §13.2.2):
    /// `If-None-Match` by weak comparison (or `*`), else `If-Modified-Since` against the stored
    /// `Last-Modified` (or `Date`, or the time it was received). Only GET and HEAD qualify.
    public func clientPreconditionsMatch(_ request: HTTPRequest, stored: StoredResponse) -> Bool {
        guard request.method == .get || request.method == .head else { return false }
        let fields = request.headerFields
        if fields.contains(.ifNoneMatch) {
            if fields.listMembers(.ifNoneMatch).contains("*") { return true }
            guard let storedTag = EntityTag.parseList(stored.response.headerFields[values: .eTag]).first else {
                return false
            }
            return EntityTag.parseList(fields[values: .ifNoneMatch]).contains { $0.weakMatches(storedTag) }
        }
        guard let since = fields.value(.ifModifiedSince).flatMap({ HTTPDate.parse($0) }) else { return false }
        let modified =
            stored.response.headerFields.value(.lastModified).flatMap { HTTPDate.parse($0) }
            ?? dateValue(of: stored)
        return modified <= since
    }

    /// The 304 a cache sends when ``clientPreconditionsMatch(_:stored:)`` holds (RFC 9110
    /// §15.4.5): the stored response's `Cache-Control`, `Content-Location`, `Date`, `ETag`,
    /// `Expires`, `Last-Modified` and `Vary`.
    public func notModifiedResponse(for stored: StoredResponse) -> HTTPResponse {
        let kept: Set<HTTPField.Name> = [.cacheControl, .contentLocation, .date, .eTag, .expires, .lastModified, .vary]
        return HTTPResponse(
            status: .notModified, headerFields: stored.response.headerFields.filtering { kept.contains($0.name) })
    }
}
