import HTTPCaching
import HTTPTypes
import WebCachePreload

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The parsers that read what the network sends, and the proxy's handling of a client's bytes,
/// each checked on arbitrary bytes: none may crash or trap, and each states a property that must
/// hold of what it accepts.
enum FuzzTargets {
    static let names = [
        "cache-control", "http-date", "vary", "range", "proxy-request", "request-parser", "response-parser",
        "html-references",
    ]

    static func run(_ name: String, _ bytes: UnsafeRawBufferPointer) {
        let text = String(decoding: bytes, as: UTF8.self)
        switch name {
        case "cache-control": cacheControl(text)
        case "http-date": httpDate(text)
        case "vary": vary(text)
        case "range": range(text, bytes: bytes)
        case "proxy-request": ProxyRequestTarget.run(bytes)
        case "request-parser": RequestParserTarget.run(bytes)
        case "response-parser": ResponseParserTarget.run(bytes)
        case "html-references": htmlReferences(bytes)
        default: fatalError("unknown fuzz target \(name); one of \(names.joined(separator: ", "))")
        }
    }

    /// `Cache-Control` and a targeted field (RFC 9213, a structured-field dictionary): when every
    /// directive is well formed, parsing what was printed gives the same directives and arguments
    /// (how they were quoted may differ). A malformed one cannot be printed faithfully (a name
    /// with a quote or comma in it), so only its parsing is checked.
    static func cacheControl(_ text: String) {
        let parsed = CacheControl(values: [text])
        _ = parsed.maxAge
        _ = TargetedCacheControl.parse(text)
        guard parsed.directives.allSatisfy(\.isWellFormed) else { return }
        let again = CacheControl(values: [parsed.description])
        let meaning = { (control: CacheControl) in control.directives.map { "\($0.name)\u{0}\($0.argument ?? "\u{1}")" }
        }
        precondition(
            meaning(again) == meaning(parsed),
            "Cache-Control round trip: '\(text)' → '\(parsed.description)' → '\(again.description)'")
    }

    /// HTTP dates (RFC 9110 §5.6.7, the obsolete forms too): a date parsed and formatted parses
    /// back to the same instant.
    static func httpDate(_ text: String) {
        guard let date = HTTPDate.parse(text) else { return }
        let formatted = HTTPDate.format(date)
        guard let again = HTTPDate.parse(formatted) else {
            preconditionFailure("'\(text)' parsed, but its IMF-fixdate '\(formatted)' did not")
        }
        precondition(again == date, "HTTP date round trip: '\(text)' → \(date) → '\(formatted)' → \(again)")
    }

    /// `Vary` and the key it makes of a request: the same request makes the same key.
    static func vary(_ text: String) {
        let halves = text.split(separator: "\n", maxSplits: 1).map(String.init)
        var response = HTTPFields()
        if let name = HTTPField.Name("Vary") { response.append(HTTPField(name: name, value: halves.first ?? "")) }
        let specifier = VarySpecifier(response)
        var request = HTTPFields()
        for line in (halves.count > 1 ? halves[1] : "").split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let name = HTTPField.Name(String(parts[0])) else { continue }
            request.append(HTTPField(name: name, value: String(parts[1])))
        }
        precondition(
            VaryKey(specifier, request: request) == VaryKey(specifier, request: request),
            "Vary keys differ for one request")
    }

    /// `Range` (RFC 9110 §14.1.2): resolved against any length, the ranges are in bounds,
    /// ascending and disjoint. The same text as `Content-Range` (§14.4): a part that parses is
    /// non-empty, within its complete length, and prints as a value that parses back to it.
    static func range(_ text: String, bytes: UnsafeRawBufferPointer) {
        if let part = ContentRange(text) {
            precondition(!part.range.isEmpty && part.range.lowerBound >= 0, "empty part \(part) from '\(text)'")
            if let length = part.completeLength {
                precondition(part.range.upperBound <= length, "part \(part) past its length from '\(text)'")
            }
            precondition(ContentRange(part.description) == part, "Content-Range round trip: '\(text)' → '\(part)'")
        }
        guard let request = ByteRangeRequest(text) else { return }
        let length = bytes.count > 2 ? Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2]) : bytes.count
        for candidate in [0, 1, length, Int.max / 2] {
            guard case .satisfiable(let ranges) = request.resolve(length: candidate) else { continue }
            for (index, range) in ranges.enumerated() {
                precondition(
                    range.lowerBound >= 0 && range.upperBound <= candidate && !range.isEmpty,
                    "range \(range) out of 0..<\(candidate) for '\(text)'")
                if index > 0 {
                    precondition(ranges[index - 1].upperBound < range.lowerBound, "ranges not disjoint for '\(text)'")
                }
            }
        }
    }

    /// A page's references (libxml2's HTML parser, driven by the C scanner in `CHTMLScan`): every
    /// one found is an absolute `http`/`https` URL without a fragment, each appears once, and links
    /// are kept apart from resources.
    static func htmlReferences(_ bytes: UnsafeRawBufferPointer) {
        guard let page = URL(string: "http://example.test/articles/page.html") else { return }
        let found = HTMLReferences.scan(Data(bytes), url: page)
        for url in found.resources.map(\.url) + found.links {
            precondition(["http", "https"].contains(url.scheme?.lowercased() ?? ""), "non-HTTP reference \(url)")
            precondition(url.host != nil && url.fragment == nil, "reference without a host or with a fragment: \(url)")
        }
        precondition(Set(found.resources).count == found.resources.count, "a resource appears twice")
        precondition(Set(found.links).count == found.links.count, "a link appears twice")
    }
}
