import NIOCore
import NIOHTTP1

/// The request line and the fields of a complete head (RFC 9112 §3, §5), checked byte by byte
/// in one pass, with what the proxy needs from the fields worked out on the way: the body's
/// framing (§6.3), persistence (§9.3), `Expect` and `Upgrade`, and where `Host` is.
enum HeadParsing {
    /// Parses `bytes`, a whole head: request line, fields, and the empty line.
    static func parse(_ bytes: ByteBuffer, limits: RequestParser.Limits) throws -> RequestHead {
        let (line, fields, facts) = try bytes.withUnsafeReadableBytes { raw in
            let line = try requestLine(raw)
            var fields: [FieldSpan] = []
            fields.reserveCapacity(16)
            var facts = FieldFacts()
            var index = line.next
            let end = raw.count - 2
            while index < end {
                let (span, next) = try field(in: raw, at: index)
                guard fields.count < limits.fieldCount else {
                    throw HTTPParseError.headTooLarge("the request head has more than \(limits.fieldCount) fields")
                }
                // The value as it came, whitespace and all: after the colon, up to the CRLF.
                let asSent = UnsafeRawBufferPointer(rebasing: raw[(span.name.upperBound + 1)..<(next - 2)])
                try facts.note(span, at: fields.count, in: raw, valueAsSent: asSent)
                fields.append(span)
                index = next
            }
            return (line, fields, facts)
        }
        // RFC 9110 §9.3.6: a CONNECT has no content; what follows the head is the tunnel's.
        let framing = line.method == .CONNECT ? .none : try facts.framing(version: line.version)
        let keepAlive =
            line.version.minor >= 1 ? !facts.connectionClose : facts.connectionKeepAlive && !facts.connectionClose
        return RequestHead(
            bytes: bytes, method: line.method, version: line.version, target: line.target, fields: fields,
            framing: framing, keepAlive: keepAlive, expectsContinue: line.version.minor >= 1 && facts.expectsContinue,
            asksToUpgrade: facts.hasUpgrade && facts.connectionUpgrade, hostFieldCount: facts.hostCount,
            firstHostField: facts.firstHost)
    }

    /// `method SP request-target SP HTTP-version CRLF` (RFC 9112 §3).
    private static func requestLine(_ raw: UnsafeRawBufferPointer) throws -> (
        method: HTTPMethod, target: Range<Int>, version: HTTPVersion, next: Int
    ) {
        var index = 0
        while index < raw.count, HTTPBytes.isTokenCharacter(raw[index]) { index += 1 }
        let methodEnd = index
        guard methodEnd > 0, index < raw.count, raw[index] == HTTPBytes.space else {
            throw HTTPParseError.malformed("the first line is not a request line")
        }
        index += 1
        let targetStart = index
        while index < raw.count, raw[index] != HTTPBytes.space, raw[index] != HTTPBytes.carriageReturn {
            guard HTTPBytes.isTargetByte(raw[index]) else {
                throw HTTPParseError.malformed("the request target holds a control character")
            }
            index += 1
        }
        let targetEnd = index
        guard targetEnd > targetStart, index < raw.count, raw[index] == HTTPBytes.space else {
            throw HTTPParseError.malformed("the request line has no target, or no version after it")
        }
        index += 1
        // "HTTP/" DIGIT "." DIGIT CRLF
        guard index + 10 <= raw.count, raw[index] == UInt8(ascii: "H"), raw[index + 1] == UInt8(ascii: "T"),
            raw[index + 2] == UInt8(ascii: "T"), raw[index + 3] == UInt8(ascii: "P"),
            raw[index + 4] == UInt8(ascii: "/"), HTTPBytes.isDigit(raw[index + 5]),
            raw[index + 6] == UInt8(ascii: "."), HTTPBytes.isDigit(raw[index + 7]),
            raw[index + 8] == HTTPBytes.carriageReturn, raw[index + 9] == HTTPBytes.lineFeed
        else {
            throw HTTPParseError.malformed("the request line does not end in HTTP/x.y")
        }
        let major = Int(raw[index + 5] - UInt8(ascii: "0"))
        let minor = Int(raw[index + 7] - UInt8(ascii: "0"))
        guard major == 1 && minor <= 1 else { throw HTTPParseError.unsupportedVersion("\(major).\(minor)") }
        let method = try knownMethod(UnsafeRawBufferPointer(rebasing: raw[0..<methodEnd]))
        try checkTargetForm(UnsafeRawBufferPointer(rebasing: raw[targetStart..<targetEnd]), method: method)
        return (method, targetStart..<targetEnd, HTTPVersion(major: major, minor: minor), index + 10)
    }

    /// One of the four forms of a request target (RFC 9112 §3.2): a path (origin-form), `*`
    /// (asterisk-form), `scheme://…` (absolute-form), or for `CONNECT` a host and port
    /// (authority-form).
    private static func checkTargetForm(_ target: UnsafeRawBufferPointer, method: HTTPMethod) throws {
        if method == .CONNECT {
            guard target.allSatisfy(isAuthorityByte) else {
                throw HTTPParseError.malformed("a CONNECT target that is not host:port")
            }
            return
        }
        switch target[0] {
        case UInt8(ascii: "/"):
            return
        case UInt8(ascii: "*") where target.count == 1:
            return
        default:
            // A scheme, then "://".
            var index = 0
            while index < target.count, isSchemeByte(target[index]) { index += 1 }
            guard index > 0, index + 3 <= target.count, target[index] == HTTPBytes.colon,
                target[index + 1] == UInt8(ascii: "/"), target[index + 2] == UInt8(ascii: "/")
            else {
                throw HTTPParseError.malformed("a request target that is neither a path nor an absolute URL")
            }
            // The authority, up to the path or the query: host characters (and userinfo).
            var end = index + 3
            while end < target.count, target[end] != UInt8(ascii: "/"), target[end] != UInt8(ascii: "?") {
                guard isAuthorityByte(target[end]) || target[end] == UInt8(ascii: "@") else {
                    throw HTTPParseError.malformed("an absolute URL whose host is not a host")
                }
                end += 1
            }
            guard end > index + 3 else { throw HTTPParseError.malformed("an absolute URL without a host") }
        }
    }

    /// A scheme's letters. RFC 3986 §3.1 allows digits, `+`, `-` and `.` after the first, but
    /// SwiftNIO's parser took letters only (and every scheme a proxy forwards is `http`).
    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        HTTPBytes.lowercased(byte) &- UInt8(ascii: "a") < 26
    }

    /// What a host and port hold: reg-name characters, an IP literal's brackets, the colon.
    private static func isAuthorityByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: Array("-._~!$&'()*+,;=%:[]".utf8).contains(byte)
        }
    }

    /// The method `name` spells, when the proxy knows it (501 otherwise, RFC 9110 §9.1): the
    /// usual ones without making a string; the others as SwiftNIO's parser knew them, and
    /// `QUERY`, which it passed on too.
    private static func knownMethod(_ name: UnsafeRawBufferPointer) throws -> HTTPMethod {
        switch name.count {
        case 3 where name.elementsEqual("GET".utf8): return .GET
        case 3 where name.elementsEqual("PUT".utf8): return .PUT
        case 4 where name.elementsEqual("HEAD".utf8): return .HEAD
        case 4 where name.elementsEqual("POST".utf8): return .POST
        default: break
        }
        let text = String(decoding: name, as: UTF8.self)
        switch text {
        case "M-SEARCH": return .MSEARCH
        case "QUERY": return .RAW(value: text)
        default: break
        }
        let method = HTTPMethod(rawValue: text)
        // "MSEARCH" is SwiftNIO's spelling of M-SEARCH, not a method of its own.
        if case .RAW = method { throw HTTPParseError.unknownMethod(text) }
        if method == .MSEARCH { throw HTTPParseError.unknownMethod(text) }
        return method
    }

    /// One field line at `index`: `field-name ":" OWS field-value OWS CRLF` (RFC 9112 §5), and
    /// where the next line starts. No whitespace before the colon (§5.1), no obsolete folding
    /// (§5.2), no control character but tab in the value.
    static func field(in raw: UnsafeRawBufferPointer, at start: Int) throws -> (span: FieldSpan, next: Int) {
        var index = start
        guard !HTTPBytes.isWhitespace(raw[index]) else {
            throw HTTPParseError.malformed("a field line is folded onto the one before (obs-fold)")
        }
        while index < raw.count, HTTPBytes.isTokenCharacter(raw[index]) { index += 1 }
        let nameEnd = index
        guard nameEnd > start, index < raw.count, raw[index] == HTTPBytes.colon else {
            throw HTTPParseError.malformed(
                nameEnd == start
                    ? "a field line without a name" : "a field name followed by something other than a colon")
        }
        index += 1
        while index < raw.count, HTTPBytes.isWhitespace(raw[index]) { index += 1 }
        let valueStart = index
        while index < raw.count, raw[index] != HTTPBytes.carriageReturn {
            guard HTTPBytes.isFieldValueByte(raw[index]) else {
                throw HTTPParseError.malformed("a field value holds a control character")
            }
            index += 1
        }
        guard index + 1 < raw.count, raw[index + 1] == HTTPBytes.lineFeed else {
            throw HTTPParseError.malformed("a field line ends in a bare CR")
        }
        var valueEnd = index
        while valueEnd > valueStart, HTTPBytes.isWhitespace(raw[valueEnd - 1]) { valueEnd -= 1 }
        let span = FieldSpan(
            nameStart: UInt32(start), nameEnd: UInt32(nameEnd), valueStart: UInt32(valueStart),
            valueEnd: UInt32(valueEnd))
        return (span, index + 2)
    }
}
