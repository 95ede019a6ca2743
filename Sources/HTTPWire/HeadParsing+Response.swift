import NIOCore
import NIOHTTP1

extension HeadParsing {
    /// Parses `bytes`, a whole response head: status line, fields, and the empty line; `toHEAD`
    /// when it answers a `HEAD`.
    static func parseResponse(_ bytes: ByteBuffer, toHEAD: Bool) throws -> ResponseHead {
        let (line, fields, facts) = try bytes.withUnsafeReadableBytes { raw in
            let line = try statusLine(raw)
            var fields: [FieldSpan] = []
            fields.reserveCapacity(16)
            var facts = FieldFacts()
            var index = line.next
            let end = raw.count - 2
            while index < end {
                let (span, next) = try field(in: raw, at: index)
                let asSent = UnsafeRawBufferPointer(rebasing: raw[(span.name.upperBound + 1)..<(next - 2)])
                try facts.note(span, at: fields.count, in: raw, valueAsSent: asSent)
                fields.append(span)
                index = next
            }
            return (line, fields, facts)
        }
        let framing = try responseFraming(status: line.status, version: line.version, toHEAD: toHEAD, facts: facts)
        let keepAlive =
            framing != .untilClose
            && (line.version.minor >= 1
                ? !facts.connectionClose : facts.connectionKeepAlive && !facts.connectionClose)
        return ResponseHead(
            bytes: bytes, version: line.version, status: line.status, reason: line.reason, fields: fields,
            framing: framing, keepAlive: keepAlive)
    }

    /// `HTTP-version SP status-code SP [ reason-phrase ] CRLF` (RFC 9112 §4); the space before
    /// an empty reason may be missing.
    private static func statusLine(_ raw: UnsafeRawBufferPointer) throws -> (
        version: HTTPVersion, status: Int, reason: Range<Int>, next: Int
    ) {
        // "HTTP/" DIGIT "." DIGIT SP 3DIGIT
        guard raw.count >= 14, raw[0] == UInt8(ascii: "H"), raw[1] == UInt8(ascii: "T"),
            raw[2] == UInt8(ascii: "T"), raw[3] == UInt8(ascii: "P"), raw[4] == UInt8(ascii: "/"),
            HTTPBytes.isDigit(raw[5]), raw[6] == UInt8(ascii: "."), HTTPBytes.isDigit(raw[7]),
            raw[8] == HTTPBytes.space, HTTPBytes.isDigit(raw[9]), HTTPBytes.isDigit(raw[10]),
            HTTPBytes.isDigit(raw[11])
        else {
            throw HTTPParseError.malformed("the first line is not a status line")
        }
        let major = Int(raw[5] - UInt8(ascii: "0"))
        let minor = Int(raw[7] - UInt8(ascii: "0"))
        guard major == 1 && minor <= 1 else {
            throw HTTPParseError.malformed("a response in HTTP/\(major).\(minor)")
        }
        let status = (0...2).reduce(0) { $0 * 10 + Int(raw[9 + $1] - UInt8(ascii: "0")) }
        guard status >= 100 else { throw HTTPParseError.malformed("a status code below 100") }
        // RFC 9110 §15.2: no interim response before HTTP/1.1.
        guard status >= 200 || minor >= 1 else { throw HTTPParseError.malformed("an interim response in HTTP/1.0") }
        var index = 12
        var reasonStart = 12
        if raw[index] == HTTPBytes.space {
            index += 1
            reasonStart = index
            while index < raw.count, raw[index] != HTTPBytes.carriageReturn {
                guard HTTPBytes.isFieldValueByte(raw[index]) else {
                    throw HTTPParseError.malformed("the reason phrase holds a control character")
                }
                index += 1
            }
        }
        guard index + 1 < raw.count, raw[index] == HTTPBytes.carriageReturn, raw[index + 1] == HTTPBytes.lineFeed
        else {
            throw HTTPParseError.malformed("the status line does not end in CRLF")
        }
        return (HTTPVersion(major: major, minor: minor), status, reasonStart..<index, index + 2)
    }

    /// How a response's body is delimited (RFC 9112 §6.3): none after `HEAD`, for 1xx, 204
    /// and 304; chunked when `Transfer-Encoding` ends in it; until the close when it does not;
    /// else the `Content-Length`, else until the close. `Transfer-Encoding` beside
    /// `Content-Length`, or in HTTP/1.0 (§6.1), is refused.
    private static func responseFraming(status: Int, version: HTTPVersion, toHEAD: Bool, facts: FieldFacts) throws
        -> ResponseFraming
    {
        if toHEAD || status < 200 || status == 204 || status == 304 { return .none }
        if facts.sawTransferEncoding {
            guard version.minor >= 1 else {
                throw HTTPParseError.malformed("Transfer-Encoding in an HTTP/1.0 response")
            }
            guard facts.contentLength == nil else {
                throw HTTPParseError.malformed("both Transfer-Encoding and Content-Length")
            }
            guard facts.chunkedCount <= 1 else { throw HTTPParseError.malformed("chunked twice") }
            return facts.lastCodingIsChunked ? .chunked : .untilClose
        }
        return facts.contentLength.map { .length($0) } ?? .untilClose
    }
}
