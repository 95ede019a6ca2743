import NIOHTTP1
import Testing

@testable import WebCacheProxy

@Suite("The identity of a request head, for repeated answers")
struct RequestIdentityTests {
    private func identity(_ uri: String, _ headers: [(String, String)]) -> RequestIdentity {
        RequestIdentity(head: HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: HTTPHeaders(headers)))
    }

    @Test("the same bytes are the same request; any other byte, order or case is another")
    func byteForByte() {
        let base = identity("/a?q=1", [("Host", "example.com"), ("Accept", "*/*")])
        #expect(base == identity("/a?q=1", [("Host", "example.com"), ("Accept", "*/*")]))
        #expect(base.hashValue == identity("/a?q=1", [("Host", "example.com"), ("Accept", "*/*")]).hashValue)
        #expect(base != identity("/a?q=2", [("Host", "example.com"), ("Accept", "*/*")]))
        #expect(base != identity("/a?q=1", [("Accept", "*/*"), ("Host", "example.com")]))
        #expect(base != identity("/a?q=1", [("host", "example.com"), ("Accept", "*/*")]))
        #expect(base != identity("/a?q=1", [("Host", "example.com")]))
        #expect(
            base
                != RequestIdentity(
                    head: HTTPRequestHead(
                        version: .http1_0, method: .GET, uri: "/a?q=1",
                        headers: HTTPHeaders([("Host", "example.com"), ("Accept", "*/*")]))))
    }

    @Test("an answer is kept for a head the second time it comes; a third time counts as a first")
    func admission() {
        let answers = ReplayCache()
        let page = identity("/page", [("Host", "example.com")])
        let other = identity("/other", [("Host", "example.com")])
        let seen = [page, other, page, other, page, page].map { answers.admits($0) }
        // (Two heads share a slot once in 32768 runs: then each comes as if for the first time.)
        #expect(seen == [false, false, true, true, false, true])
    }

    @Test("canonically equivalent but different bytes are different requests")
    func canonicalEquivalence() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed, "Swift's == on strings")
        #expect(identity("/" + composed, []) != identity("/" + decomposed, []))
        #expect(identity("/", [("X-Name", composed)]) != identity("/", [("X-Name", decomposed)]))
        #expect(identity("/" + composed, [("X-Name", composed)]) == identity("/" + composed, [("X-Name", composed)]))
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
