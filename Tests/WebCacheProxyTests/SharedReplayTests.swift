import Foundation
import HTTPTypes
import Testing
import WebCache
import WebCacheTestSupport

@testable import WebCacheProxy

@Suite("Answer replay across clients: requests that differ only in each client's own fields")
struct SharedReplayTests {
    private static let agents = ["Firefox/140", "Chrome/141", "Safari/18", "curl/8", "Chrome/141"]

    @Test("browsers that differ only in their agent, cookies and tracing ids share one kept answer")
    func sharedAcrossBrowsers() async throws {
        try await SocketlessProxy.with { server in
            let connection = try await server.connect()
            for (number, agent) in Self.agents.enumerated() {
                try await connection.send(
                    "GET /a HTTP/1.1\r\nHost: test\r\nUser-Agent: \(agent)\r\nCookie: session=\(number)\r\n"
                        + "X-Request-Id: \(UUID())\r\nAccept: */*\r\n\r\n")
            }
            let (answers, _) = try await connection.responses(Self.agents.count)
            #expect(answers.map(\.status) == Array(repeating: 200, count: Self.agents.count))
            #expect(Set(answers.map(\.text)) == ["body of /a"])
            #expect(answers.dropFirst().allSatisfy { $0.field("Cache-Status")?.contains("hit") == true })
            #expect(server.origin.total == 1)
            // Kept at the third request (the second like it was only noted): five different
            // heads byte for byte would never have been.
            #expect(server.proxy.answers.count == 1)
            await connection.close()
        }
    }

    @Test("an answer whose response varies on User-Agent is replayed only to the agent it was chosen for")
    func variesOnAgent() async throws {
        let origin = InMemoryOrigin { request in
            var fields = HTTPFields()
            fields[.cacheControl] = "max-age=60"
            fields[.vary] = "User-Agent"
            let agent = request.headerFields[.userAgent] ?? "nobody"
            return OriginResponse(
                head: HTTPResponse(status: .ok, headerFields: fields), body: Data("for \(agent)".utf8))
        }
        try await SocketlessProxy.with(origin: origin) { server in
            let connection = try await server.connect()
            let agents = ["A", "A", "A", "B", "A", "B", "B", "A", "B"]
            for agent in agents {
                try await connection.send("GET /v HTTP/1.1\r\nHost: test\r\nUser-Agent: \(agent)\r\n\r\n")
            }
            let (answers, _) = try await connection.responses(agents.count)
            #expect(answers.map(\.text) == agents.map { "for \($0)" })
            #expect(server.origin.total == 2, "one fetch for each agent's variant")
            await connection.close()
        }
    }

    @Test("with a policy that allows by user agent, another agent is never given the allowed agent's answer")
    func policyReadsAgent() async throws {
        try await SocketlessProxy.with(adjust: {
            $0.policy.allow = CachePolicy.AllowList(userAgentSuffixes: ["Allowed"])
        }) { server in
            let connection = try await server.connect()
            for agent in ["App Allowed", "App Allowed", "App Allowed", "Other", "App Allowed", "Other"] {
                try await connection.send("GET /p HTTP/1.1\r\nHost: test\r\nUser-Agent: \(agent)\r\n\r\n")
            }
            let (answers, _) = try await connection.responses(6)
            #expect(answers.map(\.status) == Array(repeating: 200, count: 6))
            #expect(answers[4].field("Cache-Status")?.contains("hit") == true)
            // The cache does not handle the other agent's requests: both go to the origin.
            #expect(server.origin.count("/p") == 3, "the first request, then each of the other agent's")
            #expect(answers[3].field("Cache-Status")?.contains("hit") != true)
            await connection.close()
        }
    }
}
