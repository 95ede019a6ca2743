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
