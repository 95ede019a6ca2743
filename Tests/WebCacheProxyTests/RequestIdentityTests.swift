import HTTPWire
import Testing
import WebCacheTestSupport

@testable import WebCacheProxy

@Suite("The identity of a request head, for repeated answers")
struct RequestIdentityTests {
    private func identity(_ uri: String, _ headers: [(String, String)], version: String = "1.1") -> RequestIdentity {
        RequestIdentity(head: head(uri, headers, version: version))
    }

    private func head(_ uri: String, _ headers: [(String, String)], version: String = "1.1") -> RequestHead {
        let text = "GET \(uri) HTTP/\(version)\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        return try! RequestHead.parsing(text)
    }

    @Test("the same bytes are the same request; any other byte, order or case of a field that counts is another")
    func byteForByte() {
        let base = identity("/a?q=1", [("Host", "example.com"), ("Accept-Encoding", "gzip")])
        #expect(base == identity("/a?q=1", [("Host", "example.com"), ("Accept-Encoding", "gzip")]))
        #expect(base.hashValue == identity("/a?q=1", [("Host", "example.com"), ("Accept-Encoding", "gzip")]).hashValue)
        #expect(base != identity("/a?q=2", [("Host", "example.com"), ("Accept-Encoding", "gzip")]))
        #expect(base != identity("/a?q=1", [("Accept-Encoding", "gzip"), ("Host", "example.com")]))
        #expect(base != identity("/a?q=1", [("host", "example.com"), ("Accept-Encoding", "gzip")]))
        #expect(base != identity("/a?q=1", [("Host", "example.com")]))
        #expect(base != identity("/a?q=1", [("Host", "example.com"), ("Accept-Encoding", "gzip")], version: "1.0"))
        #expect(base == identity("/a?q=1", [("Host", "example.com"), ("Accept-Encoding", "gzip")]).detached())
    }

    @Test("the fields each client sends its own way do not count; every other field does, in order and byte for byte")
    func clientSpecificFields() {
        let firefox = identity(
            "/a", [("Host", "example.com"), ("User-Agent", "Firefox"), ("Accept-Encoding", "gzip"), ("Cookie", "id=1")])
        let chrome = identity(
            "/a",
            [
                ("Host", "example.com"), ("user-agent", "Chrome"), ("Sec-Fetch-Dest", "image"),
                ("Accept-Encoding", "gzip"), ("X-Request-Id", "42"), ("traceparent", "00-ab-cd-01"),
            ])
        #expect(firefox == chrome && firefox.hashValue == chrome.hashValue)
        #expect(firefox == identity("/a", [("Host", "example.com"), ("Accept-Encoding", "gzip")]))
        #expect(firefox != identity("/a", [("Host", "example.com"), ("Accept-Encoding", "br")]))
        #expect(
            firefox != identity("/a", [("Host", "example.com"), ("Accept-Encoding", "gzip"), ("Range", "bytes=0-1")]))
        #expect(firefox != identity("/a", [("Accept-Encoding", "gzip"), ("Host", "example.com")]))
        #expect(firefox != identity("/a", [("Host", "example.com")]))
        #expect(
            firefox != identity("/a", [("Host", "example.com"), ("Accept-Encoding", "gzip"), ("Authorization", "x")]))
        #expect(chrome.values(of: "User-Agent") == "Chrome" && chrome.values(of: "cookie") == nil)
    }

    @Test("the same head in tunnels to different sites is a different request; a Range counts by its name")
    func tunnelsAndRanges() {
        let account = head("/account", [], version: "1.0")
        #expect(
            RequestIdentity(head: account, tunnel: "a.example") != RequestIdentity(head: account, tunnel: "b.example"))
        #expect(RequestIdentity(head: account, tunnel: "a.example") != RequestIdentity(head: account))
        #expect(
            RequestIdentity(head: account, tunnel: "a.example") == RequestIdentity(head: account, tunnel: "a.example"))
        let first = identity("/v", [("Host", "x"), ("Range", "bytes=0-99")])
        let second = identity("/v", [("Host", "x"), ("range", "bytes=500-")])
        #expect(first.asksForRange && first.range == "bytes=0-99")
        #expect(first != second, "the field's name is compared byte for byte")
        #expect(second.range == "bytes=500-", "found by its name in any case")
        #expect(first == identity("/v", [("Host", "x"), ("Range", "bytes=7-8")]))
        #expect(first != identity("/v", [("Host", "x")]) && !identity("/v", [("Host", "x")]).asksForRange)
        #expect(identity("/v", [("Range", "bytes=0-1"), ("Range", "bytes=2-3")]).range == nil)
    }

    @Test("client-specific field names are told by their letters in any case, and by nothing else")
    func clientSpecificNames() {
        for name in ClientSpecificFields.names {
            #expect(ClientSpecificFields.contains(name) && ClientSpecificFields.contains(name.uppercased()))
        }
        for name in [
            "", "Host", "Authorization", "Cache-Control", "Pragma", "If-None-Match", "Range", "Accept-Encoding",
            "User-Agentx", "User_Agent", "Cookie2", "Acceptance", "sec-fetch-sit\u{E9}", "x-request-i",
        ] {
            #expect(!ClientSpecificFields.contains(name), "\(name)")
        }
    }

    @Test("an answer is kept for a head that came within the last second; one that came longer ago counts as new")
    func admission() {
        let clock = TestClock()
        let answers = ReplayCache(clock: { clock.now })
        let page = identity("/page", [("Host", "example.com")])
        let other = identity("/other", [("Host", "example.com")])
        // (Two heads share a slot once in 32768 runs: then each comes as if for the first time.)
        #expect([page, other, page, other, page].map { answers.admits($0) } == [false, false, true, true, true])
        clock.advance(0.9)
        #expect(answers.admits(page), "0.9 s after it came last")
        clock.advance(1.5)
        #expect(!answers.admits(page) && !answers.admits(other), "1.5 s and 2.4 s after they came last")
        #expect(answers.admits(page) && answers.admits(other))
    }

    @Test("canonically equivalent but different bytes are different requests")
    func canonicalEquivalence() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed, "Swift's == on strings")
        // (A target holds no raw UTF-8 from the wire: the parser refuses it; values may.)
        #expect(identity("/", [("X-Name", composed)]) != identity("/", [("X-Name", decomposed)]))
        #expect(identity("/", [("X-Name", composed)]) == identity("/", [("X-Name", composed)]))
    }

    @Test("targets kept for reverse routing are keyed byte for byte too")
    func exactTextKeys() {
        var targets: [ByteExactText: Int] = [:]
        targets[ByteExactText("/caf\u{E9}")] = 1
        targets[ByteExactText("/cafe\u{301}")] = 2
        #expect(targets.count == 2)
        #expect(targets[ByteExactText("/caf\u{E9}")] == 1 && targets[ByteExactText("/cafe\u{301}")] == 2)
        #expect(
            ByteExactText.sameBytes("", "") && !ByteExactText.sameBytes("a", "b") && !ByteExactText.sameBytes("ab", "a")
        )
    }
}
