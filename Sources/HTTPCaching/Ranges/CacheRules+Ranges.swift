import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a stored response answers to a request that may carry `Range`.
public enum RangeAnswer: Sendable, Hashable {
    /// The whole representation (no `Range`, not applicable, `If-Range` failed, too many ranges).
    case whole
    /// 206 with one range (`Content-Range`), or with several as `multipart/byteranges`.
    case partial([Range<Int>])
    /// 416 with `Content-Range: bytes */length`.
    case unsatisfiable
}

extension CacheRules {
    /// How a stored complete response of `length` body bytes answers `request` (RFC 9110 §14):
    /// only GET, only a stored 200, only the `bytes` unit; an `If-Range` must match the stored
    /// strong `ETag`, or equal the stored `Last-Modified` when that is strong (at least a second
    /// before `Date`, RFC 9110 §8.8.2.2), or the whole response is sent. Preconditions come
    /// first: the caller sends a 304 without looking at `Range`.
    public func rangeAnswer(to request: HTTPRequest, stored: StoredResponse, length: Int) -> RangeAnswer {
        guard request.method == .get, stored.response.status.code == 200,
            let value = request.headerFields[values: .range].first, request.headerFields[values: .range].count == 1,
            let ranges = ByteRangeRequest(value)
        else { return .whole }
        if let ifRange = request.headerFields.value(.ifRange), !ifRangeMatches(ifRange, stored: stored.response) {
            return .whole
        }
        switch ranges.resolve(length: length) {
        case .whole: return .whole
        case .unsatisfiable: return .unsatisfiable
        case .satisfiable(let pieces): return .partial(pieces)
        }
    }

    /// RFC 9110 §13.1.5: a strong entity tag equal to the stored one, or an HTTP date equal to
    /// the stored strong `Last-Modified`.
    func ifRangeMatches(_ value: String, stored response: HTTPResponse) -> Bool {
        let trimmed = String(value[...].trimmingHTTPWhitespace())
        if trimmed.hasPrefix("\"") || trimmed.hasPrefix("W/") {
            guard let condition = EntityTag(parsing: trimmed), !condition.isWeak,
                let stored = response.headerFields.value(.eTag).flatMap({ EntityTag(parsing: $0) })
            else { return false }
            return condition.strongMatches(stored)
        }
        guard let date = HTTPDate.parse(trimmed),
            let lastModified = response.headerFields.value(.lastModified).flatMap({ HTTPDate.parse($0) }),
            let sent = response.headerFields.value(.date).flatMap({ HTTPDate.parse($0) }),
            sent.timeIntervalSince(lastModified) >= 1
        else { return false }
        return date == lastModified
    }

    /// The head of a 206 for `ranges` of a stored `head` whose body is `length` bytes: one range
    /// with `Content-Range`; several as `multipart/byteranges` with `boundary` (the body is
    /// ``multipartBody(parts:contentType:length:boundary:)``).
    public func partialHead(_ head: HTTPResponse, ranges: [Range<Int>], length: Int, boundary: String, bodyLength: Int)
        -> HTTPResponse
    {
        var partial = head
        partial.status = .partialContent
        if ranges.count == 1 {
            partial.headerFields[.contentRange] = ContentRange(range: ranges[0], completeLength: length).description
        } else {
            partial.headerFields[.contentRange] = nil
            partial.headerFields[.contentType] = "multipart/byteranges; boundary=\(boundary)"
        }
        partial.headerFields[.contentLength] = String(bodyLength)
        partial.headerFields[.acceptRanges] = "bytes"
        return partial
    }

    /// The 416 answer to ranges none of which overlaps a stored body of `length` bytes.
    public func unsatisfiableRangeHead(_ head: HTTPResponse, length: Int) -> HTTPResponse {
        var answer = HTTPResponse(status: .rangeNotSatisfiable)
        for name in [HTTPField.Name.date, .eTag, .lastModified, .cacheControl, .expires, .vary, .age] {
            if let value = head.headerFields[name] { answer.headerFields[name] = value }
        }
        answer.headerFields[.contentRange] = "bytes */\(length)"
        answer.headerFields[.contentLength] = "0"
        answer.headerFields[.acceptRanges] = "bytes"
        return answer
    }

    /// A `multipart/byteranges` body (RFC 9110 §14.6): each part with its `Content-Type` (when
    /// known) and `Content-Range`, then the closing delimiter.
    public func multipartBody(parts: [(Range<Int>, Data)], contentType: String?, length: Int, boundary: String) -> Data
    {
        var body = Data()
        for (range, bytes) in parts {
            var head = "\r\n--\(boundary)\r\n"
            if let contentType { head += "Content-Type: \(contentType)\r\n" }
            head += "Content-Range: \(ContentRange(range: range, completeLength: length))\r\n\r\n"
            body.append(contentsOf: head.utf8)
            body.append(bytes)
        }
        body.append(contentsOf: "\r\n--\(boundary)--\r\n".utf8)
        return body
    }
}
