import NIOCore
import NIOHTTP1

/// How a request's body is delimited (RFC 9112 §6.3).
package enum RequestFraming: Sendable, Equatable {
    /// No body: neither `Content-Length` nor `Transfer-Encoding`.
    case none
    /// `Content-Length: n`: exactly n bytes.
    case length(Int)
    /// `Transfer-Encoding: …, chunked`: chunks, then a last empty one and the trailers.
    case chunked
}

/// Where one field lies in a head's bytes: its name, and its value without the whitespace
/// around it.
package struct FieldSpan: Sendable, Equatable {
    package var nameStart: UInt32
    package var nameEnd: UInt32
    package var valueStart: UInt32
    package var valueEnd: UInt32

    package var name: Range<Int> { Int(nameStart)..<Int(nameEnd) }
    package var value: Range<Int> { Int(valueStart)..<Int(valueEnd) }
}

/// A request head as the client sent it: its bytes, and where its parts lie in them.
///
/// Only ``RequestParser`` makes one, so every head is well formed (RFC 9112): a request line
/// with a method the proxy knows and HTTP/1.0 or 1.1, fields whose names are tokens and whose
/// values hold no control characters, and one unambiguous framing of the body. Nothing is
/// copied out of the bytes until it is asked for: an answer replayed to a request
/// (``RequestIdentity``) never turns a field into a `String`.
package struct RequestHead: Sendable {
    /// The request line and the fields as they came, each line with its CRLF, then the empty line.
    package let bytes: ByteBuffer
    package let method: HTTPMethod
    package let version: HTTPVersion
    /// Where the request target lies in ``bytes``.
    package let target: Range<Int>
    /// The fields, in order.
    package let fields: [FieldSpan]
    package let framing: RequestFraming
    /// Whether the connection may stay open after the answer (RFC 9112 §9.3): HTTP/1.1 unless
    /// `Connection: close`, HTTP/1.0 only with `Connection: keep-alive`.
    package let keepAlive: Bool
    /// Whether the client waits for `100 Continue` before it sends its body (RFC 9110 §10.1.1).
    package let expectsContinue: Bool
    /// Whether the request asks to change protocols: `Upgrade` with `Connection: upgrade`
    /// (RFC 9110 §7.8).
    package let asksToUpgrade: Bool
    /// How many `Host` fields the head has, and the index of the first.
    package let hostFieldCount: Int
    package let firstHostField: Int?

    /// The head's size in bytes, as it came.
    package var size: Int { bytes.readableBytes }

    /// The request target as text.
    package var uri: String { string(target) }

    /// The method as it was sent (`M-SEARCH`, which SwiftNIO's `HTTPMethod` spells `MSEARCH`).
    package var methodName: String {
        switch method {
        case .GET: "GET"
        case .HEAD: "HEAD"
        case .POST: "POST"
        case .PUT: "PUT"
        default: string(0..<(target.lowerBound - 1))
        }
    }

    /// The text of `range` of the head's bytes.
    package func string(_ range: Range<Int>) -> String {
        bytes.getString(at: bytes.readerIndex + range.lowerBound, length: range.count) ?? ""
    }

    /// Calls `body` with the head's bytes.
    package func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeReadableBytes(body)
    }

    /// The name of a field, as sent.
    package func name(of field: FieldSpan) -> String { string(field.name) }

    /// The value of a field, without the whitespace around it.
    package func value(of field: FieldSpan) -> String { string(field.value) }

    /// The value of the `Host` field, when the head has one.
    package var host: String? { firstHostField.map { value(of: fields[$0]) } }

    /// Whether field `index`'s name is `name`, in any case (`name` in lowercase).
    package func fieldName(at index: Int, is name: StaticString) -> Bool {
        let span = fields[index]
        return withUnsafeBytes { head in
            Self.equalsIgnoringCase(UnsafeRawBufferPointer(rebasing: head[span.name]), name)
        }
    }

    /// The values of every field named `name` (any case; `name` in lowercase), in order.
    package func values(named name: StaticString) -> [String] {
        fields.indices.filter { fieldName(at: $0, is: name) }.map { value(of: fields[$0]) }
    }

    /// The value of the first field named `name` (any case; `name` in lowercase).
    package func firstValue(named name: StaticString) -> String? {
        fields.indices.first { fieldName(at: $0, is: name) }.map { value(of: fields[$0]) }
    }

    /// Every field as a name and a value, in order: for the paths that hand a head to code
    /// made for SwiftNIO's `HTTPHeaders` or HTTPTypes' fields.
    package var fieldPairs: [(name: String, value: String)] {
        fields.map { (name(of: $0), value(of: $0)) }
    }

    /// Whether the request asks to switch to WebSocket (RFC 6455 §4.1): a GET with
    /// `Upgrade: websocket` and `Connection: upgrade`.
    package var isWebSocketUpgrade: Bool {
        method == .GET && asksToUpgrade && values(named: "upgrade").contains { $0.lowercased().contains("websocket") }
    }

    /// The head with bytes of its own, so that keeping it does not keep the rest of the read it
    /// came in.
    package func detached() -> RequestHead {
        var copy = ByteBufferAllocator().buffer(capacity: bytes.readableBytes)
        copy.writeImmutableBuffer(bytes)
        return RequestHead(
            bytes: copy, method: method, version: version, target: target, fields: fields, framing: framing,
            keepAlive: keepAlive, expectsContinue: expectsContinue, asksToUpgrade: asksToUpgrade,
            hostFieldCount: hostFieldCount, firstHostField: firstHostField)
    }

    /// Whether `bytes` spell `lowercase` in any case (`lowercase` holds no uppercase letter).
    package static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for index in 0..<bytes.count where HTTPBytes.lowercased(bytes[index]) != expected[index] {
            return false
        }
        return true
    }
}
