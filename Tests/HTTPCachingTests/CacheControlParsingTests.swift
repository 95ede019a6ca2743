import HTTPTypes
import Testing
import WebCacheTestSupport

@testable import HTTPCaching

@Suite("Cache-Control parsing (RFC 9111 §5.2, §4.2.1)")
struct CacheControlParsingTests {
    struct TimeRow: CustomTestStringConvertible, Sendable {
        let value: [String]
        let directive: String
        let expected: CacheControl.TimeValue?
        let rule: String
        var testDescription: String { "\(value) → \(directive) \(String(describing: expected)) (\(rule))" }
    }

    static let timeRows: [TimeRow] = [
        .init(value: ["max-age=3600"], directive: "max-age", expected: .seconds(3600), rule: "§5.2.2.1"),
        .init(
            value: ["MaX-aGe=3600"], directive: "max-age", expected: .seconds(3600),
            rule: "§5.2 names are case-insensitive"),
        .init(value: ["max-age=003600"], directive: "max-age", expected: .seconds(3600), rule: "§1.2.2 leading zeros"),
        .init(
            value: ["max-age=\"3600\""], directive: "max-age", expected: .seconds(3600),
            rule: "§5.2 quoted form accepted"),
        .init(
            value: ["max-age=2147483648"], directive: "max-age", expected: .seconds(2_147_483_648), rule: "§1.2.2 2^31"),
        .init(
            value: ["max-age=99999999999"], directive: "max-age", expected: .seconds(2_147_483_648),
            rule: "§1.2.2 overflow caps at 2^31"),
        .init(value: ["max-age=-3600"], directive: "max-age", expected: .invalid, rule: "§4.2.1 negative is invalid"),
        .init(
            value: ["max-age='3600'"], directive: "max-age", expected: .invalid,
            rule: "§4.2.1 single quotes are not quotes"),
        .init(
            value: ["max-age=3600.0"], directive: "max-age", expected: .invalid,
            rule: "§1.2.2 decimals are not delta-seconds"),
        .init(value: ["max-age=a3600"], directive: "max-age", expected: .invalid, rule: "§4.2.1 leading alpha"),
        .init(value: ["max-age=3600a"], directive: "max-age", expected: .invalid, rule: "§4.2.1 trailing alpha"),
        .init(value: ["max-age="], directive: "max-age", expected: .invalid, rule: "§4.2.1 empty argument"),
        .init(value: ["max-age"], directive: "max-age", expected: .invalid, rule: "§5.2.2.1 argument required"),
        .init(value: ["max-age= 3600"], directive: "max-age", expected: .invalid, rule: "§5.2 no whitespace after ="),
        .init(
            value: ["max-age =3600"], directive: "max-age", expected: nil,
            rule: "§5.2 'max-age ' is not the token max-age"),
        .init(
            value: ["max-age=1800, max-age=1"], directive: "max-age", expected: .invalid,
            rule: "§4.2.1 conflicting repeats read as stale"),
        .init(
            value: ["max-age=60", "max-age=60"], directive: "max-age", expected: .seconds(60),
            rule: "§4.2.1 agreeing repeats"),
        .init(
            value: ["max-age=1", "max-age=1800"], directive: "max-age", expected: .invalid,
            rule: "§4.2.1 conflicting lines"),
        .init(
            value: ["extension=\"max-age=3600\", max-age=1"], directive: "max-age", expected: .seconds(1),
            rule: "§5.2 quoted text is not a directive"),
        .init(
            value: ["max-age=1, extension=\"max-age=3600\""], directive: "max-age", expected: .seconds(1),
            rule: "§5.2 quoted text is not a directive"),
        .init(
            value: ["foo=\"a,b\", max-age=5"], directive: "max-age", expected: .seconds(5),
            rule: "§5.2 commas inside quotes"),
        .init(
            value: ["foo=\"unterminated, max-age=5"], directive: "max-age", expected: nil,
            rule: "garbage: an unterminated quote swallows the rest"),
        .init(
            value: [",,  , max-age=7 ,"], directive: "max-age", expected: .seconds(7),
            rule: "RFC 9110 §5.6.1 empty list elements"),
        .init(value: ["s-maxage=10, max-age=1"], directive: "s-maxage", expected: .seconds(10), rule: "§5.2.2.10"),
        .init(
            value: ["max-stale"], directive: "max-stale", expected: .unlimited,
            rule: "§5.2.1.2 without a value: any staleness"),
        .init(value: ["max-stale=100"], directive: "max-stale", expected: .seconds(100), rule: "§5.2.1.2"),
        .init(value: ["min-fresh=20"], directive: "min-fresh", expected: .seconds(20), rule: "§5.2.1.3"),
        .init(
            value: ["stale-while-revalidate=30"], directive: "stale-while-revalidate", expected: .seconds(30),
            rule: "RFC 5861 §3"),
        .init(value: ["stale-if-error=60"], directive: "stale-if-error", expected: .seconds(60), rule: "RFC 5861 §4"),
        .init(value: ["\u{0}\u{7F}==,=,;;"], directive: "max-age", expected: nil, rule: "garbage never crashes"),
    ]

    @Test(arguments: timeRows)
    func timeValues(_ row: TimeRow) {
        let cc = CacheControl(values: row.value)
        let value: CacheControl.TimeValue?
        switch row.directive {
        case "max-age": value = cc.maxAge
        case "s-maxage": value = cc.sharedMaxAge
        case "max-stale": value = cc.maxStale
        case "min-fresh": value = cc.minFresh
        case "stale-while-revalidate": value = cc.staleWhileRevalidate
        case "stale-if-error": value = cc.staleIfError
        default:
            Issue.record("unknown directive \(row.directive)")
            return
        }
        #expect(value == row.expected)
    }

    @Test("flags: no-store, must-revalidate, proxy-revalidate, must-understand, no-transform, only-if-cached")
    func flags() {
        let cc = CacheControl(values: [
            "No-StOrE, MUST-revalidate", "proxy-revalidate, must-understand, no-transform, only-if-cached",
        ])
        #expect(
            cc.noStore && cc.mustRevalidate && cc.proxyRevalidate && cc.mustUnderstand && cc.noTransform
                && cc.onlyIfCached)
        let none = CacheControl(values: ["max-age=1"])
        #expect(
            !none.noStore && !none.mustRevalidate && !none.proxyRevalidate && !none.mustUnderstand && !none.onlyIfCached
        )
    }

    @Test("restrictive directives count even when malformed; permissive ones do not")
    func conservativeReading() {
        #expect(CacheControl(values: ["no-store=\"x\""]).noStore)
        #expect(CacheControl(values: ["must-revalidate=1"]).mustRevalidate)
        #expect(!CacheControl(values: ["public=yes"]).public)
        #expect(!CacheControl(values: ["immutable=\"no\""]).immutable)
        #expect(CacheControl(values: ["public, immutable"]).public)
        #expect(CacheControl(values: ["public, immutable"]).immutable)
    }

    struct ScopeRow: CustomTestStringConvertible, Sendable {
        let value: String
        let noCache: CacheControl.FieldScope?
        let `private`: CacheControl.FieldScope?
        var testDescription: String { value }
    }

    @Test(
        "no-cache and private with and without field names (§5.2.2.4, §5.2.2.7)",
        arguments: [
            ScopeRow(value: "no-cache", noCache: .all, private: nil),
            ScopeRow(value: "no-cache=\"Set-Cookie\"", noCache: .fields(["set-cookie"]), private: nil),
            ScopeRow(value: "no-cache=\"a, b\"", noCache: .fields(["a", "b"]), private: nil),
            ScopeRow(value: "no-cache=a", noCache: .fields(["a"]), private: nil),
            ScopeRow(value: "no-cache=\"a\", no-cache", noCache: .all, private: nil),
            ScopeRow(value: "no-cache=\"a b\"", noCache: .all, private: nil),
            ScopeRow(value: "private", noCache: nil, private: .all),
            ScopeRow(value: "private=\"x-user\", max-age=3", noCache: nil, private: .fields(["x-user"])),
            ScopeRow(value: "PRIVATE, no-cache=\"\"", noCache: .all, private: .all),
        ])
    func scopes(_ row: ScopeRow) {
        let cc = CacheControl(values: [row.value])
        #expect(cc.noCache == row.noCache)
        #expect(cc.private == row.private)
    }

    @Test("unknown extensions are kept and ignored")
    func extensions() {
        let cc = CacheControl(values: ["foobar, max-age=3600, community=\"UCI\""])
        #expect(cc.maxAge == .seconds(3600))
        #expect(cc.contains("foobar"))
        #expect(cc.all("community").first?.argument == "UCI")
        #expect(cc.description == "foobar, max-age=3600, community=\"UCI\"")
    }

    @Test("Pragma: no-cache is read as no-cache only without Cache-Control (§5.4)")
    func pragma() {
        let rules = CacheRules.private
        #expect(rules.directives(for: Fixtures.request(.get, "https://a.test/", ["Pragma: no-cache"])).noCache == .all)
        #expect(
            rules.directives(for: Fixtures.request(.get, "https://a.test/", ["Pragma: foo, No-Cache"])).noCache == .all)
        #expect(
            rules.directives(
                for: Fixtures.request(.get, "https://a.test/", ["Pragma: no-cache", "Cache-Control: max-age=5"])
            ).noCache == nil)
        #expect(
            rules.directives(for: Fixtures.request(.get, "https://a.test/", ["Pragma: unrecognised-extension"])).noCache
                == nil)
    }
}

@Suite("Cache-Control values parsed once")
struct CacheControlMemoTests {
    @Test("a repeated value parses as the first time; the memo stays within its capacity")
    func repeatedValues() {
        let value = "public, max-age=3600, stale-while-revalidate=60"
        #expect(CacheControlParser.parse([value]) == CacheControlParser.parseAll([value]))
        #expect(CacheControlParser.parse([value]) == CacheControlParser.parseAll([value]))
        for index in 0..<(CacheControlParser.memoCapacity * 2) {
            #expect(CacheControlParser.parse(["max-age=\(index)"]).first?.argument == "\(index)")
        }
        #expect(CacheControl(fields: [.cacheControl: value]).maxAge?.seconds == 3600)
    }

    @Test("a message's lines: none, one, or several each parsed on its own, as their values are")
    func fieldLines() {
        #expect(CacheControl(fields: [.contentType: "text/html"]).isEmpty)
        let line = "no-cache, max-age=5"
        #expect(CacheControl(fields: [.cacheControl: line]) == CacheControl(values: [line]))
        // Two lines are two lists: an unterminated quote in the first does not swallow the second,
        // as it would in the two joined into one value.
        var fields = HTTPFields()
        fields.append(HTTPField(name: .cacheControl, value: "foo=\"unterminated"))
        fields.append(HTTPField(name: .contentType, value: "text/html"))
        fields.append(HTTPField(name: .cacheControl, value: "max-age=5"))
        let parsed = CacheControl(fields: fields)
        #expect(parsed == CacheControl(values: ["foo=\"unterminated", "max-age=5"]))
        #expect(parsed.maxAge?.seconds == 5)
        #expect(CacheControl(values: ["foo=\"unterminated, max-age=5"]).maxAge == nil)
    }

    @Test("values that are not ASCII are parsed each time: canonically equal spellings keep their own bytes")
    func nonASCII() {
        let composed = "no-cache=\"caf\u{E9}\""
        let decomposed = "no-cache=\"cafe\u{301}\""
        #expect(composed == decomposed)  // equal to Swift, not byte for byte
        let first = CacheControlParser.parse([composed]).first?.argument
        let second = CacheControlParser.parse([decomposed]).first?.argument
        #expect(first.map { Array($0.utf8) } == Array("caf\u{E9}".utf8))
        #expect(second.map { Array($0.utf8) } == Array("cafe\u{301}".utf8))
    }

    @Test("lists split at commas outside quotes, escapes kept, as bytes")
    func listsSplitAsBytes() {
        #expect(CacheControlParser.splitList("a, \"b,c\", d") == ["a", " \"b,c\"", " d"])
        #expect(CacheControlParser.splitList("x=\"q\\\",r\", y") == ["x=\"q\\\",r\"", " y"])
        #expect(CacheControlParser.splitList("é,ü") == ["é", "ü"])
        #expect(CacheControlParser.splitList("\"unterminated, z") == ["\"unterminated, z"])
        #expect(CacheControlParser.splitList("") == [""])
        #expect(" \t a b \t".trimmingHTTPWhitespace() == "a b")
        #expect("\t\t".trimmingHTTPWhitespace() == "")
    }
}
