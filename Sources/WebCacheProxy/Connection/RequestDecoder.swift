import NIOCore
import NIOHTTP1

/// SwiftNIO's HTTP/1 request decoder, which also tells a request line whose method it does not
/// know (`FROBNICATE / HTTP/1.1`: 501, RFC 9110 §9.1) from bytes that are not HTTP at all (400).
/// The parser it wraps fails both with `.invalidMethod`; this looks at the bytes it failed on.
struct RequestDecoder: ByteToMessageDecoder {
    typealias InboundOut = HTTPServerRequestPart

    /// Thrown in place of `HTTPParserError.invalidMethod` when the bytes begin with a method
    /// token and a space: a request line, for a method the proxy does not implement.
    struct UnknownMethod: Error, Equatable {
        /// The method as sent, at most 32 bytes of it.
        var method: String
    }

    private var decoder = HTTPRequestDecoder(leftOverBytesStrategy: .forwardBytes)

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        do {
            return try decoder.decode(context: context, buffer: &buffer)
        } catch HTTPParserError.invalidMethod {
            throw Self.unknownMethod(atStartOf: buffer) ?? HTTPParserError.invalidMethod
        }
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        do {
            return try decoder.decodeLast(context: context, buffer: &buffer, seenEOF: seenEOF)
        } catch HTTPParserError.invalidMethod {
            throw Self.unknownMethod(atStartOf: buffer) ?? HTTPParserError.invalidMethod
        }
    }

    mutating func decoderAdded(context: ChannelHandlerContext) {
        decoder.decoderAdded(context: context)
    }

    mutating func decoderRemoved(context: ChannelHandlerContext) {
        decoder.decoderRemoved(context: context)
    }

    /// The method of the request line `bytes` begin with, if they begin with one: a token (RFC
    /// 9110 §5.6.2), a space, a target, a space and `HTTP/`, in the first line. When the parser
    /// failed on a later request in the same bytes, they begin with a method it knows: that is
    /// not taken for an unknown one, and the bytes get a 400 as before.
    static func unknownMethod(atStartOf bytes: ByteBuffer) -> UnknownMethod? {
        bytes.withUnsafeReadableBytes { raw -> UnknownMethod? in
            let line = raw.prefix(8192).split(
                separator: UInt8(ascii: "\r"), maxSplits: 1, omittingEmptySubsequences: false)[0]
            let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            guard parts.count == 3, (1...32).contains(parts[0].count), parts[0].allSatisfy(isTokenCharacter),
                !parts[1].isEmpty,
                parts[2].starts(with: "HTTP/".utf8)
            else { return nil }
            let method = String(decoding: parts[0], as: UTF8.self)
            return HTTPMethod(rawValue: method).isKnown ? nil : UnknownMethod(method: method)
        }
    }

    /// `tchar` of RFC 9110 §5.6.2.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}

extension HTTPMethod {
    /// Whether the parser knows this method (anything else it refuses as `.invalidMethod`).
    fileprivate var isKnown: Bool {
        if case .RAW = self { return false }
        return true
    }
}

extension HTTPMethod {
    /// The method as it goes on the wire. SwiftNIO parses `M-SEARCH` (SSDP) as `.MSEARCH`,
    /// whose `rawValue` is `MSEARCH`: a method no origin knows.
    var token: String {
        if case .MSEARCH = self { return "M-SEARCH" }
        return rawValue
    }
}
