import Foundation
import Testing
import WebCachePreload

@Suite("HTML references: what a page needs, from real-world-shaped markup")
struct HTMLReferencesTests {
    static let page = URL(string: "http://example.test/articles/one.html")!

    static func scan(_ html: String, url: URL = page) -> [String] {
        HTMLReferences.scan(Data(html.utf8), url: url).resources.map(\.description)
    }

    @Test("every element kind the preloader follows")
    func elementKinds() {
        let html = """
            <!doctype html><html><head>
            <link rel="stylesheet" href="/css/site.css">
            <link rel="preload" href="/fonts/body.woff2" as="font" crossorigin>
            <link rel="modulepreload" href="app.mjs">
            <link rel="icon" href="/favicon.ico"><link rel="apple-touch-icon" href="/touch.png">
            <link rel="manifest" href="/site.webmanifest">
            <link rel="alternate" href="/feed.xml" type="application/rss+xml">
            <script src="//cdn.example.test/lib.js"></script>
            </head><body>
            <img src="hero.jpg" srcset="hero-640.jpg 640w, hero-1280.jpg 1280w" alt="">
            <picture><source srcset="pic.avif 1x, pic@2x.avif 2x" type="image/avif"><img src="pic.jpg"></picture>
            <video src="clip.mp4" poster="clip.jpg"><source src="clip.webm" type="video/webm"><track src="clip.vtt"></video>
            <audio src="sound.mp3"></audio>
            <iframe src="/embedded.html"></iframe>
            <a href="two.html">next</a>
            </body></html>
            """
        #expect(
            Self.scan(html) == [
                "stylesheet http://example.test/css/site.css",
                "font http://example.test/fonts/body.woff2",
                "script http://example.test/articles/app.mjs",
                "image http://example.test/favicon.ico",
                "image http://example.test/touch.png",
                "manifest http://example.test/site.webmanifest",
                "script http://cdn.example.test/lib.js",
                "image http://example.test/articles/hero.jpg",
                "image http://example.test/articles/hero-640.jpg",
                "image http://example.test/articles/hero-1280.jpg",
                "image http://example.test/articles/pic.avif",
                "image http://example.test/articles/pic@2x.avif",
                "image http://example.test/articles/pic.jpg",
                "media http://example.test/articles/clip.mp4",
                "image http://example.test/articles/clip.jpg",
                "media http://example.test/articles/clip.webm",
                "media http://example.test/articles/clip.vtt",
                "media http://example.test/articles/sound.mp3",
                "frame http://example.test/embedded.html",
            ])
        #expect(
            HTMLReferences.scan(Data(html.utf8), url: Self.page).links == [
                URL(string: "http://example.test/articles/two.html")!
            ])
    }

    @Test("<base href> changes how relative URLs resolve, even when it comes late")
    func base() {
        let html =
            "<html><head><link rel=stylesheet href=a.css><base href=\"http://static.example.test/v2/\"></head><body><img src=b.png></body></html>"
        #expect(
            Self.scan(html) == [
                "stylesheet http://static.example.test/v2/a.css", "image http://static.example.test/v2/b.png",
            ])
    }

    @Test("inline styles and <style> blocks: url() and @import, escapes and quotes")
    func styles() {
        let html = """
            <style>@import url("theme.css"); .x { background: url('img/x\\31 .png') } @font-face { src: url(/f.woff) }</style>
            <div style="background-image: url(&quot;quoted.png&quot;)"></div>
            <table background="legacy.gif"><tr><td>old</td></tr></table>
            """
        #expect(
            Self.scan(html) == [
                "stylesheet http://example.test/articles/theme.css",
                "image http://example.test/articles/img/x1.png",
                "font http://example.test/f.woff",
                "image http://example.test/articles/quoted.png",
                "image http://example.test/articles/legacy.gif",
            ])
    }

    @Test("broken markup still yields its references")
    func brokenMarkup() {
        // An unclosed <script> swallows the rest as script text, in libxml2 as in browsers: it comes last.
        let html =
            "<html><body><div><p>unclosed <img src=one.png><img src='two.png' <img src=three.png>\n"
            + "<table><tr><td><img SRC=\"FIVE.PNG\"></table></div></span></body><img src=after-body.png><script src=four.js>"
        let found = Self.scan(html)
        #expect(found.contains("image http://example.test/articles/one.png"))
        #expect(found.contains("image http://example.test/articles/two.png"))
        #expect(found.contains("script http://example.test/articles/four.js"))
        #expect(found.contains("image http://example.test/articles/FIVE.PNG"))
        #expect(found.contains("image http://example.test/articles/after-body.png"))
    }

    @Test("data:, javascript:, mailto: and fragments are ignored; duplicates appear once; fragments are dropped")
    func ignored() {
        let html = """
            <img src="data:image/png;base64,iVBORw0KGgo="><a href="javascript:void(0)">x</a><a href="mailto:a@b.c">m</a>
            <img src="#top"><img src="same.png#one"><img src="same.png#two"><script src="about:blank"></script>
            <img src="  spaced.png  "><img src="">
            """
        #expect(
            Self.scan(html) == [
                "image http://example.test/articles/same.png", "image http://example.test/articles/spaced.png",
            ])
        #expect(HTMLReferences.scan(Data(html.utf8), url: Self.page).links.isEmpty)
    }

    @Test("an empty or non-HTML body yields nothing, never a crash")
    func empty() {
        #expect(Self.scan("").isEmpty)
        #expect(HTMLReferences.scan(Data([0xFF, 0xFE, 0x00, 0x01, 0x80]), url: Self.page).resources.isEmpty)
    }

    @Test("the rarer elements reach the walker too: embed, object, input type=image, frame, area, background, style")
    func rarerElements() {
        let html = """
            <embed src="movie.swf"><object data="doc.pdf"></object><input type="image" src="go.png">
            <input type="text" src="not-an-image.png"><table background="paper.gif"><tr><td>x</td></tr></table>
            <div style="background: url(tile.png)"></div><frameset><frame src="side.html"></frameset>
            <map><area href="region.html"></map>
            """
        let page = HTMLReferences.scan(Data(html.utf8), url: Self.page)
        #expect(
            page.resources.map(\.description) == [
                "other http://example.test/articles/movie.swf", "other http://example.test/articles/doc.pdf",
                "image http://example.test/articles/go.png", "image http://example.test/articles/paper.gif",
                "image http://example.test/articles/tile.png", "frame http://example.test/articles/side.html",
            ])
        #expect(page.links == [URL(string: "http://example.test/articles/region.html")!])
    }

    @Test("a page nested 100,000 elements deep yields the references before, inside and after the nesting")
    func deepNesting() {
        // libxml2 stopped reading at 256 open elements (and a tree walked recursively would
        // exhaust the stack well before 100,000).
        let depth = 100_000
        let html =
            "<img src=before.png>" + String(repeating: "<div>", count: depth) + "<img src=deep.png>"
            + String(repeating: "</div>", count: depth) + "<img src=after.png>"
        #expect(
            Self.scan(html) == [
                "image http://example.test/articles/before.png", "image http://example.test/articles/deep.png",
                "image http://example.test/articles/after.png",
            ])
    }

    @Test("unclosed elements pile up past 256 deep, and references after them are still found")
    func unclosedElements() {
        let html =
            String(repeating: "<font color=red><b>", count: 400) + "<a href=/far.html>far</a><img src=/far.png>"
        let page = HTMLReferences.scan(Data(html.utf8), url: Self.page)
        #expect(page.resources.map(\.description) == ["image http://example.test/far.png"])
        #expect(page.links == [URL(string: "http://example.test/far.html")!])
    }

    @Test("the encoding: UTF-8 unless <meta charset> says otherwise, a byte-order mark honoured")
    func encodings() {
        let latin1 = Data("<meta charset=\"iso-8859-1\"><img src=\"caf".utf8) + Data([0xE9]) + Data(".png\">".utf8)
        let utf8 = Data("<img src=\"café.png\">".utf8)
        let marked = Data([0xEF, 0xBB, 0xBF]) + Data("<IMG SRC=bom.png>".utf8)
        let found = [latin1, utf8, marked].map {
            HTMLReferences.scan($0, url: Self.page).resources.map(\.url.absoluteString)
        }
        #expect(
            found == [
                ["http://example.test/articles/caf%C3%A9.png"], ["http://example.test/articles/caf%C3%A9.png"],
                ["http://example.test/articles/bom.png"],
            ])
    }
}
