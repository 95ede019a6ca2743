import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Hop-by-hop fields and Cache-Status (RFC 9110 §7.6.1, RFC 9211)")
struct MessageFieldsTests {
    @Test("forwarding removes hop-by-hop fields and those named in Connection")
    func forwarding() {
        let fields = Fixtures.fields([
            "Connection: X-A, keep-alive", "X-A: 1", "X-B: 2", "Keep-Alive: 5", "TE: trailers", "Upgrade: h2c",
            "Transfer-Encoding: chunked", "Proxy-Authorization: p",
        ])
        let forwarded = MessageFields.removingHopByHop(fields)
        #expect(forwarded.map(\.name.rawName) == ["X-B", "Proxy-Authorization"])
        #expect(MessageFields.removingUnstorable(fields).map(\.name.rawName) == ["X-B"])
    }

    @Test("a message without hop-by-hop fields comes back whole; Connection: keep-alive takes itself and Keep-Alive")
    func commonMessages() {
        let plain = Fixtures.fields(["Content-Type: text/html", "X-Keep: 1", "Proxy-Authenticate: Basic"])
        #expect(MessageFields.removingHopByHop(plain) == plain)
        #expect(MessageFields.removingUnstorable(plain).map(\.name.rawName) == ["Content-Type", "X-Keep"])
        let keepAlive = Fixtures.fields([
            "Content-Type: text/html", "Connection: keep-alive", "Keep-Alive: timeout=5", "ETag: \"a\"",
        ])
        #expect(MessageFields.removingHopByHop(keepAlive).map(\.name.rawName) == ["Content-Type", "ETag"])
        #expect(MessageFields.removingUnstorable(keepAlive).map(\.name.rawName) == ["Content-Type", "ETag"])
        #expect(MessageFields.connectionListed(in: keepAlive) == [.keepAlive])
    }

    @Test(
        "fields gathered without the connection's are what removing hop-by-hop fields leaves, whatever Connection lists"
    )
    func gatheredWithoutConnectionFields() {
        let cases: [[String]] = [
            ["Content-Type: text/css", "Connection: keep-alive", "Keep-Alive: timeout=5", "ETag: \"a\""],
            ["Connection: Keep-Alive, Upgrade", "Upgrade: h2c", "Connection: te", "TE: trailers", "X-A: 1"],
            ["X-A: 1", "Transfer-Encoding: chunked", "Proxy-Authorization: p"],
            ["Connection: close", "Close: 1", "X-A: 1"],
            ["X-Before: 1", "Connection: keep-alive, X-Private", "X-Private: s", "X-After: 2"],
            ["Connection: keep-alive", "Connection: X-B", "X-B: 1", "X-C: 2"],
            [],
        ]
        for lines in cases {
            let fields = Fixtures.fields(lines)
            #expect(Self.gathered(fields) == MessageFields.removingHopByHop(fields), "\(lines)")
        }
        let named = Self.gathered(
            Fixtures.fields(["X-Before: 1", "Connection: keep-alive, X-Private", "X-Private: s", "X-After: 2"]))
        #expect(named.map(\.name.rawName) == ["X-Before", "X-After"])
    }

    static func gathered(_ fields: HTTPFields) -> HTTPFields {
        var gathering = MessageFields.Gathering(capacity: fields.count)
        for field in fields { gathering.add(field) }
        return gathering.fields()
    }

    @Test("Connection options are names in any case: Keep-Alive, CLOSE, and ones merely starting like them")
    func connectionOptionsInAnyCase() throws {
        let fields = Fixtures.fields([
            "Connection: Keep-Alive , CLOSE", "Connection: keep-alivex,X-A", "Keep-Alive: 5", "Close: 1",
            "Keep-Alivex: 2", "X-A: 3", "X-B: 4",
        ])
        #expect(MessageFields.removingHopByHop(fields).map(\.name.rawName) == ["X-B"])
        let listed = MessageFields.connectionListed(in: fields)
        let expected = try ["keep-alive", "close", "keep-alivex", "x-a"].map { try #require(HTTPField.Name($0)) }
        #expect(listed == Set(expected))
    }

    @Test("Connection's list tolerates empty and blank members and skips tokens that are not field names")
    func connectionListEdges() throws {
        let fields = Fixtures.fields([
            "Connection: , ,keep-alive,,X-A , ", "Connection: ", "Connection: x y, X-B", "X-A: 1", "X-B: 2", "X-C: 3",
        ])
        #expect(MessageFields.removingHopByHop(fields).map(\.name.rawName) == ["X-C"])
        let expected = try ["keep-alive", "x-a", "x-b"].map { try #require(HTTPField.Name($0)) }
        #expect(MessageFields.connectionListed(in: fields) == Set(expected))
    }

    @Test("the name checks agree with the sets they stand for, in any case of the name as sent")
    func nameChecks() throws {
        for name in MessageFields.hopByHop {
            #expect(MessageFields.isHopByHop(name) && MessageFields.isNeverStored(name), "\(name)")
            let shouted = try #require(HTTPField.Name(name.rawName.uppercased()))
            #expect(MessageFields.isHopByHop(shouted), "\(shouted)")
        }
        for name in MessageFields.neverStored.subtracting(MessageFields.hopByHop) {
            #expect(!MessageFields.isHopByHop(name) && MessageFields.isNeverStored(name), "\(name)")
        }
        for other in [
            "Content-Type", "Trailers", "T", "Keep-Alive-X", "Proxy", "X-Connection", "Upgrade-Insecure-Requests",
        ] {
            let name = try #require(HTTPField.Name(other))
            #expect(!MessageFields.isHopByHop(name) && !MessageFields.isNeverStored(name), "\(other)")
        }
    }

    struct StatusRow: CustomTestStringConvertible, Sendable {
        let status: CacheStatus
        let text: String
        var testDescription: String { text }
    }

    @Test(arguments: [
        StatusRow(status: CacheStatus(cache: "WebCache", hit: true, ttl: 376), text: "WebCache; hit; ttl=376"),
        StatusRow(
            status: CacheStatus(cache: "WebCache", forward: .stale, forwardStatus: 304, stored: true),
            text: "WebCache; fwd=stale; fwd-status=304; stored"),
        StatusRow(
            status: CacheStatus(cache: "WebCache", forward: .uriMiss, stored: true, collapsed: true),
            text: "WebCache; fwd=uri-miss; stored; collapsed"),
        StatusRow(
            status: CacheStatus(cache: "my cache", hit: true, ttl: -20, detail: "offline"),
            text: "\"my cache\"; hit; ttl=-20; detail=offline"),
        StatusRow(
            status: CacheStatus(cache: "WebCache", forward: .bypass, detail: "not on the allow-list"),
            text: "WebCache; fwd=bypass; detail=\"not on the allow-list\""),
    ])
    func cacheStatus(_ row: StatusRow) {
        #expect(row.status.description == row.text)
    }

    @Test("Cache-Status members accumulate")
    func appendStatus() {
        var fields = Fixtures.fields(["Cache-Status: Upstream; fwd=miss"])
        fields.appendCacheStatus(CacheStatus(cache: "WebCache", hit: true))
        #expect(fields[values: .cacheStatus] == ["Upstream; fwd=miss", "WebCache; hit"])
    }
}
