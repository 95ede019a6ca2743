import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Vary and secondary keys (RFC 9111 §4.1)")
struct VaryTests {
    struct SpecifierRow: CustomTestStringConvertible, Sendable {
        let lines: [String]
        let expected: VarySpecifier
        var testDescription: String { "Vary \(lines)" }
    }

    @Test(arguments: [
        SpecifierRow(lines: [], expected: .none),
        SpecifierRow(lines: ["*"], expected: .any),
        SpecifierRow(lines: ["*, *"], expected: .any),
        SpecifierRow(lines: [", *"], expected: .any),
        SpecifierRow(lines: ["", "*"], expected: .any),
        SpecifierRow(lines: ["*", "*"], expected: .any),
        SpecifierRow(lines: ["Foo, *"], expected: .any),
        SpecifierRow(lines: ["*, Foo"], expected: .any),
        SpecifierRow(lines: ["Foo"], expected: .fields([HTTPField.Name("foo")!])),
        SpecifierRow(lines: [" foo ,BAR,, Foo"], expected: .fields([HTTPField.Name("Foo")!, HTTPField.Name("Bar")!])),
        SpecifierRow(
            lines: ["Accept-Encoding", "Accept-Language"], expected: .fields([.acceptEncoding, .acceptLanguage])),
        SpecifierRow(lines: [""], expected: .none),
    ])
    func specifier(_ row: SpecifierRow) {
        var fields = HTTPFields()
        for line in row.lines { fields.append(HTTPField(name: .vary, value: line)) }
        #expect(VarySpecifier(fields) == row.expected)
    }

    struct MatchRow: CustomTestStringConvertible, Sendable {
        let vary: String
        let stored: [String]
        let presented: [String]
        let matches: Bool
        let rule: String
        /// More fields of the stored response (`Content-Language`).
        var response: [String] = []
        var testDescription: String { "Vary: \(vary) \(response) \(stored) vs \(presented) (\(rule))" }
    }

    @Test(arguments: [
        MatchRow(vary: "Foo", stored: ["Foo: 1"], presented: ["Foo: 1"], matches: true, rule: "equal"),
        MatchRow(vary: "Foo", stored: ["Foo: 1"], presented: ["Foo: 2"], matches: false, rule: "different"),
        MatchRow(vary: "Foo", stored: [], presented: ["Foo: 1"], matches: false, rule: "stored request omitted it"),
        MatchRow(vary: "Foo", stored: ["Foo: 1"], presented: [], matches: false, rule: "presented request omits it"),
        MatchRow(
            vary: "Foo", stored: ["Foo: 1", "Other: 2"], presented: ["Foo: 1", "Other: 3"], matches: true,
            rule: "unlisted fields do not count"),
        MatchRow(
            vary: "Foo, Bar", stored: ["Foo: 1", "Bar: abc"], presented: ["Foo: 1", "Bar: abc"], matches: true,
            rule: "two fields"),
        MatchRow(
            vary: "Foo, Bar, Baz", stored: ["Foo: 1", "Bar: abc", "Baz: 789"],
            presented: ["Foo: 1", "Baz: 789", "Bar: abcde"], matches: false, rule: "order does not hide a difference"),
        MatchRow(
            vary: "Foo, Bar, Baz", stored: ["Foo: 1", "Baz: 789"], presented: ["Foo: 1", "Baz: 789"], matches: true,
            rule: "absent in both"),
        MatchRow(
            vary: "Foo", stored: ["Foo: 1, 2"], presented: ["Foo: 1", "Foo: 2"], matches: true, rule: "combined lines"),
        MatchRow(
            vary: "Foo", stored: ["Foo: 1,2"], presented: ["Foo:  1, 2 "], matches: true, rule: "whitespace normalised"),
        MatchRow(
            vary: "foo", stored: ["FOO: x"], presented: ["Foo: x"], matches: true, rule: "names are case-insensitive"),
        MatchRow(
            vary: "Foo", stored: ["Foo: X"], presented: ["Foo: x"], matches: false, rule: "values are case-sensitive"),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: en, de"], presented: ["Accept-Language: eN, De"],
            matches: true, rule: "Accept-* compared without case"),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: en, de"], presented: ["Accept-Language:  en ,   de"],
            matches: true, rule: "Accept-* whitespace"),
        MatchRow(vary: "Foo", stored: ["Foo: "], presented: [], matches: false, rule: "empty differs from absent"),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: en, de"], presented: ["Accept-Language: de, en"],
            matches: true, rule: "languages of equal weight in any order"),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: en;q=0.5, de"],
            presented: ["Accept-Language: de, en;q=0.50"], matches: true, rule: "ordered by weight"),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: en, de;q=0.5"],
            presented: ["Accept-Language: de, en;q=0.5"], matches: false, rule: "different preferences"),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: en, de"],
            presented: ["Accept-Language: fr;q=0.5, de;q=1.0"], matches: true,
            rule: "Content-Language is the new request's first choice", response: ["Content-Language: de"]),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: de"], presented: ["Accept-Language: de"], matches: true,
            rule: "the same request still matches", response: ["Content-Language: de"]),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: en, de"], presented: ["Accept-Language: fr, de;q=0.9"],
            matches: false,
            rule: "Content-Language is not the first choice", response: ["Content-Language: de"]),
        MatchRow(
            vary: "Accept-Language", stored: ["Accept-Language: en"], presented: ["Accept-Language: de"], matches: true,
            rule: "a language range covers its subtags", response: ["Content-Language: de-DE"]),
        MatchRow(
            vary: "Accept-Language, Foo", stored: ["Accept-Language: en", "Foo: 1"],
            presented: ["Accept-Language: de", "Foo: 2"], matches: false,
            rule: "the other fields must still match", response: ["Content-Language: de"]),
    ])
    func matching(_ row: MatchRow) {
        let rules = CacheRules.private
        let stored = Fixtures.stored(
            ["Vary: \(row.vary)", "Cache-Control: max-age=60"] + row.response, request: row.stored)
        #expect(
            rules.variantMatches(stored, request: Fixtures.request(.get, "https://example.com/resource", row.presented))
                == row.matches)
    }

    @Test("the most recent matching variant is selected (by Date, then receipt)")
    func selection() {
        let rules = CacheRules.private
        var older = Fixtures.stored(["Vary: Foo", "Date: @-100", "X-Id: older"], request: ["Foo: 1"])
        older.responseTime = Fixtures.at(50)
        let newer = Fixtures.stored(["Vary: Foo", "Date: @0", "X-Id: newer"], request: ["Foo: 1"])
        let other = Fixtures.stored(["Vary: Foo", "Date: @10", "X-Id: other"], request: ["Foo: 2"])
        let chosen = rules.selectVariant(
            from: [older, newer, other], for: Fixtures.request(.get, "https://example.com/resource", ["Foo: 1"]))
        #expect(chosen?.response.headerFields[HTTPField.Name("X-Id")!] == "newer")
        #expect(
            rules.selectVariant(
                from: [older, other], for: Fixtures.request(.get, "https://example.com/resource", ["Foo: 3"])) == nil)
    }

    @Test("secondary keys are stable text, equal exactly when variants match")
    func keys() {
        let specifier = VarySpecifier(Fixtures.fields(["Vary: Accept-Encoding, X-Mode"]))
        let a = VaryKey(specifier, request: Fixtures.fields(["Accept-Encoding: gzip, br", "X-Mode: a"]))
        let b = VaryKey(specifier, request: Fixtures.fields(["accept-encoding: GZIP,br", "x-mode: a"]))
        let c = VaryKey(specifier, request: Fixtures.fields(["Accept-Encoding: gzip"]))
        #expect(a == b)
        #expect(a != c)
        #expect(a.text == "accept-encoding:gzip,br\nx-mode:a")
        #expect(VaryKey(.none, request: Fixtures.fields(["A: b"])).text.isEmpty)
    }
}
