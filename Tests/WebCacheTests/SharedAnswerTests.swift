import Foundation
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

@Suite("Engine: fresh answers offered to a caller that holds their encoding")
struct SharedAnswerTests {
    @Test(
        "a fresh answer is offered under its identity; when the caller holds it, it is a counted hit and nothing is built; ranges and preconditions are never offered"
    )
    func offered() async throws {
        try await EngineHarness.run { h in
            h.origin.route("/a") { _ in .text("shared body", headers: [("Cache-Control", "max-age=600")]) }
            _ = try await h.get("/a")
            let url = h.origin.url("/a")
            func ask(_ headers: [String] = [], method: HTTPRequest.Method = .get, holds: Bool)
                -> (answer: HTTPCache.StoredAnswer?, offers: [(ReplayTerms.AnswerIdentity, Bool)])
            {
                var offers: [(ReplayTerms.AnswerIdentity, Bool)] = []
                let answer = h.cache.storedAnswer(
                    for: Fixtures.request(method, url.absoluteString, headers), url: url, bodyFilesFrom: nil
                ) { offer in
                    offers.append((offer.identity, offer.bodyInFile))
                    return holds
                }
                return (answer, offers)
            }
            // storedAnswer never waits for the index writer; storedResponse does, so the entry is in.
            #expect(h.cache.storedResponse(for: Fixtures.request(.get, url.absoluteString, [])) != nil)
            _ = ask(holds: false)  // the first answer after the fill may come before the store's revision settles
            let built = ask(holds: false)
            guard case .built(let response)? = built.answer else {
                Issue.record("a fresh answer the caller does not hold is built")
                return
            }
            #expect(String(decoding: response.body, as: UTF8.self) == "shared body")
            #expect(built.offers.count == 1 && built.offers.first?.1 == false)
            guard let offered = built.offers.first?.0 else { return }

            let hitsBefore = h.cache.counters.hits
            let shared = ask(holds: true)
            guard case .shared(let terms, let offer)? = shared.answer else {
                Issue.record("a held answer is shared")
                return
            }
            #expect(!offer.bodyInFile && offer.range == nil)
            #expect(terms.answerIdentity == offered, "the same entry, revisions and second")
            #expect(h.cache.counters.hits == hitsBefore + 1, "a shared answer is a hit")

            for headers in [
                ["Range: bytes=0-1"], ["If-None-Match: \"x\""], ["If-Modified-Since: Sat, 21 Nov 2026 00:00:00 GMT"],
            ] {
                let own = ask(headers, holds: true)
                #expect(own.offers.isEmpty, "\(headers) makes the answer the request's own (no body files)")
                if case .built? = own.answer {} else { Issue.record("\(headers): built") }
            }
            let head = ask(method: .head, holds: false)
            #expect(head.offers.count == 1 && head.offers.first?.0 == offered && head.offers.first?.1 == false)

            h.clock.advance(1.5)
            let later = ask(holds: false)
            #expect(later.offers.count == 1 && later.offers.first?.0 != offered, "the next second: another answer")
        }
    }

    @Test(
        "one range of a body sent from its file is offered with its bytes; small, several, unsatisfiable and conditional ranges are not"
    )
    func rangesOffered() async throws {
        try await EngineHarness.run { h in
            let media = Fixtures.patternedBytes(100_000, seed: 4)
            h.origin.route("/m") { _ in
                TestOrigin.Response(
                    status: 200, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"m1\"")], body: media)
            }
            _ = try await h.get("/m")
            let url = h.origin.url("/m")
            func offers(_ headers: [String]) -> [AnswerOffer] {
                var offers: [AnswerOffer] = []
                _ = h.cache.storedAnswer(
                    for: Fixtures.request(.get, url.absoluteString, headers), url: url, bodyFilesFrom: 1000
                ) { offer in
                    offers.append(offer)
                    return false
                }
                return offers
            }
            // storedAnswer never waits for the index writer; storedResponse does, so the entry is in.
            #expect(h.cache.storedResponse(for: Fixtures.request(.get, url.absoluteString, [])) != nil)
            _ = offers([])  // the first answer after the fill may come before the store's revision settles
            let whole = try #require(offers([]).first)
            #expect(whole.bodyInFile && whole.range == nil)
            for (header, range) in [
                ("Range: bytes=10-5009", 10..<5010), ("Range: bytes=98000-", 98_000..<100_000),
                ("Range: bytes=-1000", 99_000..<100_000),
            ] {
                let offered = offers([header, "If-Range: \"m1\""])
                #expect(offered.count == 1 && offered.first?.range == range && offered.first?.bodyInFile == true)
                #expect(offered.first?.identity == whole.identity, "the answer's identity; the range is apart")
            }
            for headers in [
                ["Range: bytes=0-9"], ["Range: bytes=0-1999,5000-6999"], ["Range: bytes=200000-"],
                ["Range: bytes=0-4999", "If-Range: \"m0\""], ["Range: bytes=0-4999", "If-None-Match: \"m1\""],
            ] {
                #expect(offers(headers).isEmpty, "\(headers)")
            }
        }
    }
}
