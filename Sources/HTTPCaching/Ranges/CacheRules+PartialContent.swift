import HTTPTypes

/// Rules for parts of a representation (206 responses and bodies cut short): which may be
/// stored, which combine, and what a stored part answers (RFC 9111 §3.3, §3.4).
extension CacheRules {
    /// The part a 206 carries, when a cache may store it: one range in `bytes` with the complete
    /// length known (RFC 9111 §3.3). `nil` for `multipart/byteranges`, a missing, repeated or
    /// malformed `Content-Range`, or an unknown length (`/*`). The body's length must still be
    /// checked against the range once it has arrived.
    public func storablePart(of response: HTTPResponse) -> ContentRange? {
        guard response.status.code == 206, response.headerFields[values: .contentRange].count == 1,
            let value = response.headerFields.value(.contentRange), let part = ContentRange(value),
            part.completeLength != nil,
            response.headerFields.value(.contentType)?.lowercased().hasPrefix("multipart/byteranges") != true
        else { return nil }
        if let declared = response.headerFields.value(.contentLength), Int(declared) != part.range.count { return nil }
        return part
    }

    /// Whether a new part may be combined with a stored one (RFC 9111 §3.4, RFC 9110 §15.3.7.3):
    /// the same complete length and the same strong entity tag. Parts without one never combine
    /// (the newer replaces the stored one): nothing says they are of one representation.
    public func partsCombine(stored: HTTPResponse, new: HTTPResponse) -> Bool {
        guard let storedPart = stored.status.code == 206 ? storablePart(of: stored) : completePart(of: stored),
            let newPart = new.status.code == 206 ? storablePart(of: new) : completePart(of: new),
            storedPart.completeLength == newPart.completeLength
        else { return false }
        return sameStrongEntityTag(stored, new)
    }

    /// Whether both responses carry the same strong entity tag.
    public func sameStrongEntityTag(_ first: HTTPResponse, _ second: HTTPResponse) -> Bool {
        guard let a = first.headerFields.value(.eTag).flatMap({ EntityTag(parsing: $0) }),
            let b = second.headerFields.value(.eTag).flatMap({ EntityTag(parsing: $0) })
        else { return false }
        return a.strongMatches(b)
    }

    /// The ranges of `request` (GET with one `Range` field) a stored part answers: every one of
    /// them, resolved against the complete length, lies within the part; an `If-Range` must match
    /// as for a complete response. `nil` otherwise: the request goes to the origin.
    public func rangesWithin(_ part: ContentRange, for request: HTTPRequest, stored: StoredResponse) -> [Range<Int>]? {
        guard request.method == .get, let length = part.completeLength, request.headerFields[values: .range].count == 1,
            let value = request.headerFields.value(.range), let ranges = ByteRangeRequest(value)
        else { return nil }
        if let ifRange = request.headerFields.value(.ifRange), !ifRangeMatches(ifRange, stored: stored.response) {
            return nil
        }
        guard case .satisfiable(let pieces) = ranges.resolve(length: length),
            pieces.allSatisfy({ $0.lowerBound >= part.range.lowerBound && $0.upperBound <= part.range.upperBound })
        else { return nil }
        return pieces
    }

    /// The head stored for a part: `head`'s fields (the newest response's, RFC 9111 §3.4), with
    /// `Content-Range` and `Content-Length` for `part` — or, when the part is the whole
    /// representation, a 200 without `Content-Range`.
    public func headForPart(_ head: HTTPResponse, part: ContentRange) -> HTTPResponse {
        var stored = head
        if part.isComplete {
            stored.status = .ok
            stored.headerFields[.contentRange] = nil
        } else {
            stored.status = .partialContent
            stored.headerFields[.contentRange] = part.description
        }
        stored.headerFields[.contentLength] = String(part.range.count)
        return stored
    }

    /// A complete 200 seen as the part `0..<length`, when its length is declared.
    func completePart(of response: HTTPResponse) -> ContentRange? {
        guard response.status.code == 200,
            let length = response.headerFields.value(.contentLength).flatMap({ Int($0) }),
            length >= 0
        else {
            return nil
        }
        return ContentRange(range: 0..<length, completeLength: length)
    }
}
