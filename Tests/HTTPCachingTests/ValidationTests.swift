import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Validation (RFC 9111 §4.3, §3.2)")
struct ValidationTests {
    let rules = CacheRules.private

    @Test("If-None-Match carries every stored entity tag; the client's own validators are replaced")
    func ifNoneMatch() {
        let a = Fixtures.stored(["ETag: \"abc\"", "Last-Modified: @-100"], request: ["Foo: 1"])
        let b = Fixtures.stored(["ETag: W/\"def\""])
        let request = Fixtures.request(
            .get, "https://example.com/resource",
            ["Foo: 1", "If-None-Match: \"client\"", "If-Modified-Since: @-5", "Connection: close"])
        let conditional = rules.conditionalRequest(for: request, revalidating: [a, b])
        #expect(conditional.headerFields[.ifNoneMatch] == "\"abc\", W/\"def\"")
        #expect(conditional.headerFields[.ifModifiedSince] == nil)
        #expect(conditional.headerFields[HTTPField.Name("Foo")!] == "1")  // §4.3.1 Vary-selecting fields go along
        #expect(conditional.headerFields[.connection] == nil)
        #expect(rules.validatorSummary(for: a) == "If-None-Match: \"abc\"")
    }

    @Test("If-Modified-Since from Last-Modified when there is no entity tag; none without validators")
    func ifModifiedSince() {
        let stored = Fixtures.stored(["Last-Modified: @-3000"])
        let conditional = rules.conditionalRequest(for: Fixtures.request(), revalidating: [stored])
        #expect(conditional.headerFields[.ifModifiedSince] == Fixtures.httpDate(-3000))
        #expect(conditional.headerFields[.ifNoneMatch] == nil)
        let bare = rules.conditionalRequest(
            for: Fixtures.request(), revalidating: [Fixtures.stored(["Last-Modified: nonsense"])])
        #expect(bare.headerFields[.ifModifiedSince] == nil && bare.headerFields[.ifNoneMatch] == nil)
        #expect(rules.validatorSummary(for: Fixtures.stored([])) == nil)
    }

    @Test("a 304 updates stored fields, keeps Content-Length, drops the old Age, and restarts the clock (§3.2, §4.3.4)")
    func notModifiedMerge() {
        let stored = Fixtures.stored([
            "Date: @0", "Cache-Control: max-age=1", "ETag: \"e\"", "Test-Header: old", "Content-Length: 36",
            "Age: 500", "Kept: yes",
        ])
        let notModified = Fixtures.response(
            304,
            [
                "Date: @100", "Cache-Control: max-age=3600", "ETag: \"e\"", "Test-Header: new", "Content-Length: 10",
                "Connection: x-hop", "X-Hop: 1", "Keep-Alive: timeout=1",
            ])
        #expect(rules.notModified(notModified, appliesTo: stored))
        let updated = rules.updating(
            stored, with: notModified, requestTime: Fixtures.at(99), responseTime: Fixtures.at(100))
        let fields = updated.response.headerFields
        #expect(fields[HTTPField.Name("Test-Header")!] == "new")
        #expect(fields[.cacheControl] == "max-age=3600")
        #expect(fields[.contentLength] == "36")
        #expect(fields[HTTPField.Name("Kept")!] == "yes")
        #expect(fields[.age] == nil)
        #expect(fields[HTTPField.Name("X-Hop")!] == nil && fields[.keepAlive] == nil)
        #expect(fields[values: .date] == [Fixtures.httpDate(100)])
        #expect(updated.response.status == .ok)
        #expect(rules.reuse(updated, for: Fixtures.request(), now: Fixtures.at(200)).action == .useFresh)
    }

    @Test("a 304 without Date is dated on receipt (RFC 9110 §6.6.1)")
    func notModifiedWithoutDate() {
        let stored = Fixtures.stored([
            "Date: @0", "Cache-Control: max-age=60", "Last-Modified: Wed, 01 Jan 2020 00:00:00 GMT", "Test-Header: a",
        ])
        let updated = rules.updating(
            stored, with: Fixtures.response(304, ["Last-Modified: Wed, 01 Jan 2020 00:00:00 GMT"]),
            requestTime: Fixtures.at(1000), responseTime: Fixtures.at(1000))
        #expect(updated.response.headerFields[.date] == Fixtures.httpDate(1000))
        #expect(updated.response.headerFields[HTTPField.Name("Test-Header")!] == "a")
        #expect(rules.reuse(updated, for: Fixtures.request(), now: Fixtures.at(1010)).action == .useFresh)
    }

    struct AppliesRow: CustomTestStringConvertible, Sendable {
        let stored: [String]
        let notModified: [String]
        let applies: Bool
        var testDescription: String { "\(stored) ← 304 \(notModified)" }
    }

    @Test(
        "which stored response a 304 refers to (§4.3.4)",
        arguments: [
            AppliesRow(stored: ["ETag: \"a\""], notModified: ["ETag: \"a\""], applies: true),
            AppliesRow(stored: ["ETag: \"a\""], notModified: ["ETag: \"b\""], applies: false),
            AppliesRow(stored: ["ETag: W/\"a\""], notModified: ["ETag: W/\"a\""], applies: true),
            AppliesRow(stored: ["ETag: \"a\""], notModified: ["ETag: W/\"a\""], applies: true),
            AppliesRow(stored: [], notModified: ["ETag: \"a\""], applies: false),
            AppliesRow(stored: ["Last-Modified: @-10"], notModified: ["Last-Modified: @-10"], applies: true),
            AppliesRow(stored: ["Last-Modified: @-10"], notModified: ["Last-Modified: @-5"], applies: false),
            AppliesRow(stored: ["ETag: \"a\""], notModified: [], applies: true),
        ])
    func applies(_ row: AppliesRow) {
        #expect(
            rules.notModified(Fixtures.response(304, row.notModified), appliesTo: Fixtures.stored(row.stored))
                == row.applies)
    }

    struct PreconditionRow: CustomTestStringConvertible, Sendable {
        let stored: [String]
        let request: [String]
        var method: HTTPRequest.Method = .get
        let notModified: Bool
        let rule: String
        var testDescription: String { rule }
    }

    @Test(
        "client conditionals answered from the cache (§4.3.2)",
        arguments: [
            PreconditionRow(
                stored: ["ETag: \"abcdef\""], request: ["If-None-Match: \"abcdef\""], notModified: true,
                rule: "strong match"),
            PreconditionRow(
                stored: ["ETag: W/\"abcdef\""], request: ["If-None-Match: W/\"abcdef\""], notModified: true,
                rule: "weak match"),
            PreconditionRow(
                stored: ["ETag: \"abcdef\""], request: ["If-None-Match: \"1234\", \"abcdef\", \"5678\""],
                notModified: true, rule: "in a list"),
            PreconditionRow(
                stored: ["ETag: \"abcdef\""], request: ["If-None-Match: \"1234\""], notModified: false, rule: "no match"
            ),
            PreconditionRow(stored: ["ETag: \"a\""], request: ["If-None-Match: *"], notModified: true, rule: "star"),
            PreconditionRow(
                stored: ["ETag: \"abcdef\"", "Last-Modified: @-5000"],
                request: ["If-None-Match: \"abcdef\"", "If-Modified-Since: @-10000"], notModified: true,
                rule: "If-None-Match takes precedence"),
            PreconditionRow(
                stored: ["ETag: \"x\"", "Last-Modified: @-5000"],
                request: ["If-None-Match: \"y\"", "If-Modified-Since: @0"], notModified: false,
                rule: "If-Modified-Since ignored beside If-None-Match"),
            PreconditionRow(
                stored: ["Last-Modified: @-3000"], request: ["If-Modified-Since: @-3000"], notModified: true,
                rule: "same Last-Modified"),
            PreconditionRow(
                stored: ["Last-Modified: @-3000"], request: ["If-Modified-Since: @-2000"], notModified: true,
                rule: "earlier Last-Modified"),
            PreconditionRow(
                stored: ["Last-Modified: @-3000"], request: ["If-Modified-Since: @-4000"], notModified: false,
                rule: "modified since"),
            PreconditionRow(
                stored: ["Date: @0"], request: ["If-Modified-Since: @10"], notModified: true,
                rule: "Date stands in for Last-Modified"),
            PreconditionRow(
                stored: ["Last-Modified: @-3000"], request: ["If-Modified-Since: garbage"], notModified: false,
                rule: "invalid date ignored"),
            PreconditionRow(
                stored: ["ETag: \"a\""], request: ["If-None-Match: \"a\""], method: .post, notModified: false,
                rule: "GET and HEAD only"),
        ])
    func preconditions(_ row: PreconditionRow) {
        let request = Fixtures.request(row.method, "https://example.com/resource", row.request)
        #expect(rules.clientPreconditionsMatch(request, stored: Fixtures.stored(row.stored)) == row.notModified)
    }

    @Test("a 304 to the client carries ETag and the caching fields (RFC 9110 §15.4.5)")
    func notModifiedForClient() {
        let stored = Fixtures.stored([
            "ETag: \"abcdef\"", "Cache-Control: max-age=100000", "Date: @0", "Content-Type: text/plain",
            "Content-Length: 5",
        ])
        let response = rules.notModifiedResponse(for: stored)
        #expect(response.status == .notModified)
        #expect(response.headerFields[.eTag] == "\"abcdef\"")
        #expect(response.headerFields[.cacheControl] == "max-age=100000")
        #expect(response.headerFields[.contentType] == nil && response.headerFields[.contentLength] == nil)
    }

    @Test("entity tags parse strictly enough and leniently where servers are sloppy")
    func entityTags() {
        #expect(EntityTag(parsing: "\"abc\"") == EntityTag("abc"))
        #expect(EntityTag(parsing: "W/\"abc\"") == EntityTag("abc", weak: true))
        #expect(EntityTag(parsing: "abc") == EntityTag("abc"))
        #expect(EntityTag(parsing: "\"unterminated") == nil)
        #expect(EntityTag(parsing: "\"a\"b\"") == nil)
        #expect(EntityTag.parseList(["\"a,b\", W/\"c\""]) == [EntityTag("a,b"), EntityTag("c", weak: true)])
        #expect(!EntityTag("a", weak: true).strongMatches(EntityTag("a")))
        #expect(EntityTag("a", weak: true).weakMatches(EntityTag("a")))
    }

    @Test(
        "entity tags are read as bytes: whitespace around, W/ in either case, quotes, and what is not a tag",
        arguments: [
            (" \t\"x\"\t ", EntityTag("x")), ("w/\"x\"", EntityTag("x", weak: true)), ("\"\"", EntityTag("")),
            ("\"é-ü\"", EntityTag("é-ü")), ("W/x", EntityTag("x", weak: true)), ("W/", nil), ("W", EntityTag("W")),
            ("\"", nil), ("", nil), ("   ", nil), ("a b", nil), ("W/\"x", nil), ("\"x\" ", EntityTag("x")),
            ("\"x\"\u{301}", nil), ("\"a\"\"", nil),
        ] as [(String, EntityTag?)])
    func entityTagBytes(text: String, expected: EntityTag?) {
        #expect(EntityTag(parsing: text) == expected)
        #expect(EntityTag(parsing: Substring("--" + text + "--").dropFirst(2).dropLast(2)) == expected)
    }
}
