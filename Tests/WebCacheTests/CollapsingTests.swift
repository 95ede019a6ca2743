import Foundation
import HTTPCaching
import HTTPTypes
import Testing
import WebCache
import WebCacheStore
import WebCacheTestSupport

@Suite("Collapsed requests take only answers the cache could have served them (RFC 9111 §4)")
struct CollapsingTests {
    @Test(
        "two identical anonymous requests at once, in a shared cache: which answers the second may take",
        arguments: [
            // (response fields, may the second request take the first's answer?, field it must not see)
            (["Cache-Control: max-age=60"], true, nil),
            (["Cache-Control: private, max-age=60", "Set-Cookie: session=first"], false, nil),
            (["Cache-Control: no-store", "Set-Cookie: session=first"], false, nil),
            (["Cache-Control: no-cache", "ETag: \"n\""], false, nil),
            (["Cache-Control: max-age=60, private=\"Set-Cookie\"", "Set-Cookie: session=first"], true, "Set-Cookie"),
            (["Cache-Control: max-age=60", "Vary: User-Agent"], false, nil),
        ] as [([String], Bool, String?)])
    func shared(fields: [String], shares: Bool, hidden: String?) async throws {
        try await EngineHarness.run(rules: .shared) { h in
            let calls = Locked(0)
            h.origin.route("/r") { _ in
                let call = calls.withLock { count -> Int in
                    count += 1
                    return count
                }
                var response = TestOrigin.Response.text(
                    "answer \(call)",
                    headers: fields.map { line in
                        let colon = line.firstIndex(of: ":")!
                        return (String(line[..<colon]), String(line[line.index(colon, offsetBy: 2)...]))
                    })
                response.delay = .milliseconds(500)
                return response
            }
            let first = Task { try await h.get("/r", ["User-Agent: first"]) }
            // The second is sent once the origin has the first, while its answer is held back.
            for _ in 0..<200 where h.origin.count("/r") == 0 { try await Task.sleep(for: .milliseconds(5)) }
            let second = try await h.get(
                "/r", ["User-Agent: \(fields.contains("Vary: User-Agent") ? "second" : "first")"])
            let firstAnswer = try await first.value
            #expect(firstAnswer.text == "answer 1")
            #expect(second.text == (shares ? "answer 1" : "answer 2"))
            #expect(h.origin.count("/r") == (shares ? 1 : 2))
            if let hidden {
                #expect(
                    second.head.headerFields[HTTPField.Name(hidden)!] == nil,
                    "the second request saw the first's \(hidden)")
                #expect(firstAnswer.head.headerFields[HTTPField.Name(hidden)!] != nil)
            }
        }
    }
}
