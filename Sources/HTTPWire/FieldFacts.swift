import NIOHTTP1

/// What the fields of a request head say about its framing and its connection, gathered field
/// by field while the head is parsed (RFC 9112 §6.3, §9.3; RFC 9110 §7.6.1, §7.8, §10.1.1).
struct FieldFacts {
    var hostCount = 0
    var firstHost: Int?
    /// The `Content-Length`; `nil` when none came.
    var contentLength: Int?
    /// Whether `Transfer-Encoding` came, how often its codings named `chunked`, and whether
    /// the last one did.
    var sawTransferEncoding = false
    var chunkedCount = 0
    var lastCodingIsChunked = false
    /// Transfer codings other than chunked (`gzip, chunked`): the proxy does not implement them.
    var otherCodings = 0
    var connectionClose = false
    var connectionKeepAlive = false
    var connectionUpgrade = false
    var hasUpgrade = false
    var expectsContinue = false

    /// Notes field number `index`, `span` of `raw`, if it is one the proxy reads (`valueAsSent`
    /// is its value with the whitespace around it).
    mutating func note(
        _ span: FieldSpan, at index: Int, in raw: UnsafeRawBufferPointer, valueAsSent: UnsafeRawBufferPointer
    ) throws {
        let name = UnsafeRawBufferPointer(rebasing: raw[span.name])
        let value = UnsafeRawBufferPointer(rebasing: raw[span.value])
        switch name.count {
        case 4 where RequestHead.equalsIgnoringCase(name, "host"):
            hostCount += 1
            if firstHost == nil { firstHost = index }
        case 6 where RequestHead.equalsIgnoringCase(name, "expect"):
            Self.forEachElement(of: value) { element in
                if RequestHead.equalsIgnoringCase(element, "100-continue") { expectsContinue = true }
            }
        case 7 where RequestHead.equalsIgnoringCase(name, "upgrade"):
            hasUpgrade = hasUpgrade || !value.isEmpty
        case 10 where RequestHead.equalsIgnoringCase(name, "connection"):
            Self.forEachElement(of: valueAsSent) { option in
                if RequestHead.equalsIgnoringCase(option, "close") { connectionClose = true }
                if RequestHead.equalsIgnoringCase(option, "keep-alive") { connectionKeepAlive = true }
                if RequestHead.equalsIgnoringCase(option, "upgrade") { connectionUpgrade = true }
            }
        case 14 where RequestHead.equalsIgnoringCase(name, "content-length"):
            // A tab in a framing field is a classic way to make two parsers read it differently
            // (SwiftNIO's refused "5\t" and did not see `chunked` in "chunked\t"): refused.
            guard !valueAsSent.contains(HTTPBytes.tab) else {
                throw HTTPParseError.malformed("a tab in Content-Length")
            }
            try noteContentLength(value)
        case 17 where RequestHead.equalsIgnoringCase(name, "transfer-encoding"):
            guard !valueAsSent.contains(HTTPBytes.tab) else {
                throw HTTPParseError.malformed("a tab in Transfer-Encoding")
            }
            sawTransferEncoding = true
            var elements = 0
            Self.forEachElement(of: value) { coding in
                let chunked = RequestHead.equalsIgnoringCase(coding, "chunked")
                if chunked { chunkedCount += 1 } else { otherCodings += 1 }
                lastCodingIsChunked = chunked
                elements += 1
            }
            // Every comma between two codings: no empty ones ("chunked," was SwiftNIO's error too).
            guard elements == value.filter({ $0 == HTTPBytes.comma }).count + 1 else {
                throw HTTPParseError.malformed("an empty coding in Transfer-Encoding")
            }
        default:
            break
        }
    }

    /// RFC 9112 §6.3: one `Content-Length`, a number; a second field, a list or anything else
    /// is a request whose length cannot be trusted (a list of equal values may be taken as one,
    /// but SwiftNIO's parser refused them, and no client needs them).
    private mutating func noteContentLength(_ value: UnsafeRawBufferPointer) throws {
        guard contentLength == nil else {
            throw HTTPParseError.malformed("more than one Content-Length")
        }
        guard (1...18).contains(value.count), value.allSatisfy(HTTPBytes.isDigit) else {
            throw HTTPParseError.malformed("the Content-Length is not a number")
        }
        contentLength = value.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// How the body is delimited (RFC 9112 §6.3): chunked when `Transfer-Encoding` is chunked
    /// (never beside `Content-Length`, never in HTTP/1.0, never after another coding, which gets
    /// 501: §6.1), else the `Content-Length`, else no body.
    func framing(version: HTTPVersion) throws -> RequestFraming {
        if sawTransferEncoding {
            guard version.minor >= 1 else {
                throw HTTPParseError.malformed("Transfer-Encoding in an HTTP/1.0 request")
            }
            guard contentLength == nil else {
                throw HTTPParseError.malformed("both Transfer-Encoding and Content-Length")
            }
            guard lastCodingIsChunked, chunkedCount == 1 else {
                throw HTTPParseError.malformed("a Transfer-Encoding that does not end in chunked, once")
            }
            // Its body would go on without the coding the origin needs to read it (RFC 9112 §6.1).
            guard otherCodings == 0 else { throw HTTPParseError.unknownTransferCoding }
            return .chunked
        }
        return contentLength.map { .length($0) } ?? .none
    }

    /// Calls `body` with each element of a comma-separated list (RFC 9110 §5.6.1), without the
    /// spaces around it; empty elements are skipped. A tab is not taken for whitespace here,
    /// as SwiftNIO's parser did not: "close\t" is no `close`, and no connection is kept or
    /// closed on a reading another parser would not share.
    static func forEachElement(of list: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        var start = 0
        while start <= list.count {
            var end = start
            while end < list.count, list[end] != HTTPBytes.comma { end += 1 }
            var first = start
            var last = end
            while first < last, list[first] == HTTPBytes.space { first += 1 }
            while last > first, list[last - 1] == HTTPBytes.space { last -= 1 }
            if last > first { body(UnsafeRawBufferPointer(rebasing: list[first..<last])) }
            start = end + 1
        }
    }
}
