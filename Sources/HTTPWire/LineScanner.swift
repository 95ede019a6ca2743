import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a connection as they arrive, read where HTTP/1.1 has lines (RFC 9112 §2.2): field
/// sections (a head, trailers), chunk-size lines, the CRLF after a chunk, and the bytes of a
/// body in between. A line ends in CRLF and nothing else: an LF without its CR is refused
/// wherever it comes. What it returns are slices of the bytes read, not copies.
struct LineScanner {
    private var buffer = ByteBuffer()
    /// Where the search for the end of a section or a line goes on (from the reader index): the
    /// bytes before it hold none.
    private var scanned = 0

    /// How many bytes are held, not read yet.
    var buffered: Int { buffer.readableBytes }

    mutating func append(_ bytes: ByteBuffer) {
        if buffer.readableBytes == 0 {
            buffer = bytes
        } else {
            var bytes = bytes
            buffer.writeBuffer(&bytes)
        }
    }

    /// The bytes held, taken out.
    mutating func take() -> ByteBuffer {
        defer { discard() }
        return buffer
    }

    /// Lets go of the bytes held.
    mutating func discard() {
        buffer = ByteBuffer()
        scanned = 0
    }

    /// RFC 9112 §2.2: empty lines before a request line are ignored.
    mutating func skipLeadingEmptyLines() {
        while buffer.readableBytes >= 2,
            buffer.withUnsafeReadableBytes({ $0[0] == HTTPBytes.carriageReturn && $0[1] == HTTPBytes.lineFeed })
        {
            buffer.moveReaderIndex(forwardBy: 2)
            scanned = 0
        }
    }

    /// A field section at the start of the bytes — a start line and fields, or trailers — through
    /// the empty line that ends it, once it has all come (`nil` until then). One that grows past
    /// `limit` bytes (its empty line aside) is refused, as soon as it does.
    mutating func nextFieldSection(limit: Int, what: String) throws -> ByteBuffer? {
        let (found, searched) = try buffer.withUnsafeReadableBytes { raw -> (Int?, Int) in
            var index = scanned
            while index < raw.count {
                guard let lineFeed = Self.index(of: HTTPBytes.lineFeed, in: raw, from: index) else {
                    return (nil, raw.count)
                }
                guard lineFeed > 0, raw[lineFeed - 1] == HTTPBytes.carriageReturn else {
                    throw HTTPParseError.malformed("a line of the \(what) ends in a bare LF")
                }
                // An empty line: CRLF right after the CRLF before it (or at the very start).
                if lineFeed == 1
                    || (lineFeed >= 3 && raw[lineFeed - 2] == HTTPBytes.lineFeed
                        && raw[lineFeed - 3] == HTTPBytes.carriageReturn)
                {
                    return (lineFeed + 1, lineFeed + 1)
                }
                index = lineFeed + 1
            }
            return (nil, raw.count)
        }
        guard let found else {
            scanned = searched
            guard searched <= limit + 2 else {
                throw HTTPParseError.headTooLarge("the \(what) passed \(limit) bytes without ending")
            }
            return nil
        }
        guard found <= limit + 2 else {
            throw HTTPParseError.headTooLarge("the \(what) is \(found - 2) bytes; the limit is \(limit)")
        }
        scanned = 0
        return buffer.readSlice(length: found)
    }

    /// Up to `count` bytes of a body, as they have come.
    mutating func readBody(upTo count: Int) -> ByteBuffer? {
        let length = min(count, buffer.readableBytes)
        guard length > 0 else { return nil }
        return buffer.readSlice(length: length)
    }

    /// The size of the next chunk, once its whole line has come (`nil` until then): hexadecimal
    /// digits, then nothing or extensions (RFC 9112 §7.1.1), then CRLF; a line past
    /// `lineLimit` bytes is refused.
    mutating func nextChunkSize(lineLimit: Int) throws -> Int? {
        let parsed = try buffer.withUnsafeReadableBytes { raw -> (size: Int, lineLength: Int)? in
            guard let lineFeed = Self.index(of: HTTPBytes.lineFeed, in: raw, from: scanned) else {
                guard raw.count <= lineLimit else {
                    throw HTTPParseError.malformed("a chunk-size line passed \(lineLimit) bytes")
                }
                return nil
            }
            guard lineFeed > 0, raw[lineFeed - 1] == HTTPBytes.carriageReturn else {
                throw HTTPParseError.malformed("a chunk-size line ends in a bare LF")
            }
            let lineEnd = lineFeed - 1
            var index = 0
            var size = 0
            while index < lineEnd, let digit = HTTPBytes.hexValue(raw[index]) {
                // Fifteen hexadecimal digits at most: 2^60 bytes, and no overflow.
                guard index < 15 else { throw HTTPParseError.malformed("a chunk size of more than 15 digits") }
                size = size << 4 | digit
                index += 1
            }
            guard index > 0 else { throw HTTPParseError.malformed("a chunk-size line without a size") }
            try Self.checkChunkExtensions(UnsafeRawBufferPointer(rebasing: raw[index..<lineEnd]))
            return (size, lineFeed + 1)
        }
        guard let parsed else {
            scanned = buffer.readableBytes
            return nil
        }
        buffer.moveReaderIndex(forwardBy: parsed.lineLength)
        scanned = 0
        return parsed.size
    }

    /// Skips the CRLF that ends a chunk's data, once it has come; anything else is refused.
    mutating func skipLineEnd() throws -> Bool {
        guard buffer.readableBytes >= 2 else { return false }
        let ending = buffer.withUnsafeReadableBytes { ($0[0], $0[1]) }
        guard ending == (HTTPBytes.carriageReturn, HTTPBytes.lineFeed) else {
            throw HTTPParseError.malformed("a chunk's data is not followed by CRLF")
        }
        buffer.moveReaderIndex(forwardBy: 2)
        return true
    }

    /// Skips the trailer section after the last chunk, once it has all come: fields, checked as
    /// a head's are, without framing fields (RFC 9110 §6.5.1), then the empty line. Returns
    /// whether it has.
    mutating func skipTrailers(limit: Int) throws -> Bool {
        guard let section = try nextFieldSection(limit: limit, what: "trailer section") else { return false }
        try section.withUnsafeReadableBytes { raw in
            var index = 0
            while index < raw.count - 2 {
                let line = try HeadParsing.field(in: raw, at: index)
                let name = UnsafeRawBufferPointer(rebasing: raw[line.span.name])
                if RequestHead.equalsIgnoringCase(name, "transfer-encoding")
                    || RequestHead.equalsIgnoringCase(name, "content-length")
                {
                    throw HTTPParseError.malformed("a framing field among the trailers")
                }
                index = line.next
            }
        }
        return true
    }

    /// What may follow a chunk's size on its line (RFC 9112 §7.1.1): nothing, or extensions —
    /// `;name` or `;name=value`, the value a token or a quoted string — whose meaning is
    /// ignored. Without the optional whitespace the grammar allows around `;` and `=`, which
    /// SwiftNIO's parser refused too.
    private static func checkChunkExtensions(_ bytes: UnsafeRawBufferPointer) throws {
        var index = 0
        func token() -> Bool {
            let start = index
            while index < bytes.count, HTTPBytes.isTokenCharacter(bytes[index]) { index += 1 }
            return index > start
        }
        func quotedString() -> Bool {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return true
                case UInt8(ascii: "\\"):
                    guard index + 1 < bytes.count, HTTPBytes.isFieldValueByte(bytes[index + 1]) else { return false }
                    index += 2
                case let byte where HTTPBytes.isFieldValueByte(byte):
                    index += 1
                default:
                    return false
                }
            }
            return false
        }
        while index < bytes.count {
            guard bytes[index] == HTTPBytes.semicolon else {
                throw HTTPParseError.malformed("a chunk size followed by something other than extensions")
            }
            index += 1
            guard token() else { throw HTTPParseError.malformed("a chunk extension without a name") }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else { continue }
            index += 1
            let valid = index < bytes.count && (bytes[index] == UInt8(ascii: "\"") ? quotedString() : token())
            guard valid else { throw HTTPParseError.malformed("a chunk extension with a malformed value") }
        }
    }

    /// The first `byte` in `raw` at or after `start`.
    private static func index(of byte: UInt8, in raw: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < raw.count, let base = raw.baseAddress else { return nil }
        guard let found = memchr(base + start, Int32(byte), raw.count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }
}
