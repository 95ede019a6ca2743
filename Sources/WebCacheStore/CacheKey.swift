import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The primary cache key (RFC 9111 §2): the request method and the target URI, query included.
///
/// The URI is normalised only where RFC 3986 says two spellings are the same resource: the
/// scheme and host are lower-cased and the fragment is dropped. The query string is never
/// dropped or reordered.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    /// The request method, e.g. `GET`.
    public let method: String
    /// The absolute target URI.
    public let url: String
    /// The host, lower-cased, for per-host listing and removal.
    public let host: String

    /// The key for `method` and `url`; `nil` when `url` is not absolute (no scheme or host).
    public init?(method: HTTPRequest.Method = .get, url: URL) {
        let text = url.absoluteString
        if let host = Self.hostOfNormalized(text) {
            (self.url, self.host) = (text, host)
        } else if let normalized = Self.normalizedByComponents(url) {
            (self.url, self.host) = normalized
        } else {
            return nil
        }
        self.method = method.rawValue
    }

    /// The normal form of `url` and its host, worked out by `URLComponents`.
    static func normalizedByComponents(_ url: URL) -> (url: String, host: String)? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            let scheme = components.scheme?.lowercased(), let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        components.scheme = scheme
        components.host = host
        components.fragment = nil
        if components.path.isEmpty { components.path = "/" }
        guard let normalized = components.string else { return nil }
        return (normalized, host)
    }

    /// The key of a request: its method and its absolute URI.
    public init?(request: HTTPRequest) {
        guard let url = request.url else { return nil }
        self.init(method: request.method, url: url)
    }

    /// Recreates a key read from the index.
    init(storedMethod: String, url: String, host: String) {
        self.method = storedMethod
        self.url = url
        self.host = host
    }

    /// The host of `url` when the URL is already in normal form — `http` or `https` in lower
    /// case, a lower-case host name or IPv4 address without user information, a path, no
    /// fragment, nothing but ASCII, no IDNA (`xn--`) label — so that the key can be the text
    /// itself; `nil` otherwise (then `URLComponents` normalises it).
    static func hostOfNormalized(_ url: String) -> String? {
        var text = url
        return text.withUTF8 { bytes in
            normalBounds(of: bytes).map { String(decoding: bytes[$0.host], as: UTF8.self) }
        }
    }

    /// How a URL in normal form (see ``hostOfNormalized(_:)``) divides: its scheme, its
    /// authority (host and port as written) and its path with the query.
    struct NormalForm: Equatable {
        var scheme: String
        var authority: String
        var path: String
    }

    /// `url`'s parts when it is in normal form, read off its bytes; `nil` otherwise.
    static func normalForm(of url: String) -> NormalForm? {
        var text = url
        return text.withUTF8 { bytes -> NormalForm? in
            guard let bounds = normalBounds(of: bytes) else { return nil }
            return NormalForm(
                scheme: bounds.authority.lowerBound == 7 ? "http" : "https",
                authority: String(decoding: bytes[bounds.authority], as: UTF8.self),
                path: String(decoding: bytes[bounds.authority.upperBound...], as: UTF8.self))
        }
    }

    /// Where the authority and the host of a URL in normal form are in its bytes (the path
    /// follows the authority); `nil` when it is not in normal form.
    private static func normalBounds(of bytes: UnsafeBufferPointer<UInt8>) -> (authority: Range<Int>, host: Range<Int>)?
    {
        let start: Int
        if bytes.starts(with: "http://".utf8) {
            start = 7
        } else if bytes.starts(with: "https://".utf8) {
            start = 8
        } else {
            return nil
        }
        var hostEnd: Int?
        var index = start
        scanAuthority: while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "-"):
                break
            case UInt8(ascii: ":") where hostEnd == nil:
                hostEnd = index
            case UInt8(ascii: "/"):
                break scanAuthority
            default:
                return nil  // upper case, userinfo, IPv6, escapes, a query or fragment right after the host
            }
            index += 1
        }
        let pathStart = index
        guard pathStart < bytes.count, pathStart > start else { return nil }
        let end = hostEnd ?? pathStart
        guard end > start else { return nil }
        if let hostEnd {
            guard pathStart > hostEnd + 1,
                bytes[(hostEnd + 1)..<pathStart].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return nil }
        }
        for byte in bytes[pathStart...] where byte == UInt8(ascii: "#") || byte >= 0x80 { return nil }
        // URLComponents turns IDNA labels into Unicode; leave those to it.
        let hostBytes = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if hostBytes.count >= 4,
            (0...(hostBytes.count - 4)).contains(where: { hostBytes[$0..<($0 + 4)].elementsEqual("xn--".utf8) })
        {
            return nil
        }
        return (start..<pathStart, start..<end)
    }

    /// `GET https://example.com/a?b=1`
    public var description: String { "\(method) \(url)" }
}
