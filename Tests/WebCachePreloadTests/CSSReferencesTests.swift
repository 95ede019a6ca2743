import Testing
import WebCachePreload

@Suite("CSS references: url(), @import, escapes, comments")
struct CSSReferencesTests {
    struct Row: Sendable, CustomTestStringConvertible {
        var css: String
        var expected: [CSSReference]
        var note: String
        var testDescription: String { note }
    }

    static func resource(_ url: String) -> CSSReference { CSSReference(url: url, isImport: false) }
    static func sheet(_ url: String) -> CSSReference { CSSReference(url: url, isImport: true) }

    static let rows: [Row] = [
        Row(css: "body { background: url(a.png) }", expected: [resource("a.png")], note: "unquoted"),
        Row(
            css: "p{background:URL( \"b c.png\" )}", expected: [resource("b c.png")],
            note: "quoted, spaces, upper-case function"),
        Row(
            css: "i { background-image: url('single.gif') , url( spaced.gif ) }",
            expected: [resource("single.gif"), resource("spaced.gif")], note: "single quotes and padding"),
        Row(
            css: "@import \"base.css\";\n@import url(print.css) print;\n@IMPORT 'x.css' screen;",
            expected: [sheet("base.css"), sheet("print.css"), sheet("x.css")], note: "@import forms"),
        Row(
            css: "a { b: url(paren\\(1\\).png) }", expected: [resource("paren(1).png")],
            note: "escaped parentheses in an unquoted URL"),
        Row(
            css: "a { b: url(\"\\6A .png\") }", expected: [resource("j.png")],
            note: "hex escape with its trailing space"),
        Row(
            css: "/* url(no.png) @import 'no.css'; */ a { b: url(yes.png) }", expected: [resource("yes.png")],
            note: "comments are skipped"),
        Row(
            css:
                "@font-face { font-family: X; src: url(/f/x.woff2) format(\"woff2\"), url(/f/x.woff) format(\"woff\") }",
            expected: [resource("/f/x.woff2"), resource("/f/x.woff")], note: "fonts; format() strings are not URLs"),
        Row(
            css: "h1 { background-image: image-set(\"h1.png\" 1x, \"h1@2x.png\" 2x) }",
            expected: [resource("h1.png"), resource("h1@2x.png")], note: "image-set strings"),
        Row(css: "a { content: \"url(not-a-url.png)\" }", expected: [], note: "url( inside a string is text"),
        Row(
            css: "a { b: url(unterminated.png", expected: [resource("unterminated.png")],
            note: "broken CSS still yields its reference"),
        Row(css: "a { b: url() ; c: url('') }", expected: [], note: "empty URLs are dropped"),
        Row(
            css: "a{b:url(data:image/png;base64,iVBORw0KGgo=)}",
            expected: [resource("data:image/png;base64,iVBORw0KGgo=")],
            note: "data: URLs come through; the resolver drops them"),
    ]

    @Test("scan finds every reference", arguments: rows)
    func scan(_ row: Row) {
        #expect(CSSReferences.scan(row.css) == row.expected)
    }

    @Test(
        "srcset candidates",
        arguments: [
            ("a.png 1x, b.png 2x", ["a.png", "b.png"]),
            ("small.jpg 480w,large.jpg 1080w", ["small.jpg", "large.jpg"]),
            ("only.png", ["only.png"]),
            ("  spaced.png  ,  trailing.png ,", ["spaced.png", "trailing.png"]),
            ("data:image/png;base64,AAAA 1x, real.png 2x", ["data:image/png;base64,AAAA", "real.png"]),
            ("a.png, b.png 2x", ["a.png", "b.png"]),
            ("weird.png (1x, 2x) 1x, next.png", ["weird.png", "next.png"]),
        ])
    func sourceSet(_ srcset: String, _ expected: [String]) {
        #expect(SourceSet.urls(in: srcset) == expected)
    }
}
