import Foundation
import HTTPWire
import NIOCore
import Testing
import WebCache
import WebCacheStore
import WebCacheTestSupport

@testable import WebCacheProxy

@Suite("Defaults for a proxy exposed beyond loopback")
struct NetworkExposureTests {
    @Test(
        "addresses of this machine and of private networks are internal; public ones and names are not",
        arguments: [
            ("127.0.0.1", true), ("127.1.2.3", true), ("localhost", true), ("api.localhost", true), ("::1", true),
            ("[::1]", true),
            ("0.0.0.0", true), ("10.1.2.3", true), ("172.16.0.1", true), ("172.31.255.255", true),
            ("192.168.1.1", true),
            ("169.254.169.254", true), ("100.64.0.1", true), ("fd12:3456::1", true), ("fe80::1", true),
            ("::ffff:10.0.0.1", true),
            ("172.32.0.1", false), ("8.8.8.8", false), ("192.169.0.1", false), ("example.com", false),
            ("2001:db8::1", false),
            ("1.2.3", false), ("300.1.1.1", false),
        ])
    func internalAddresses(host: String, isInternal: Bool) {
        #expect(NetworkExposure.isInternal(host) == isInternal)
    }

    @Test(
        "listening addresses: loopback only, or not",
        arguments: [
            ("127.0.0.1", true), ("::1", true), ("localhost", true), ("0.0.0.0", false), ("192.168.1.5", false),
            ("::", false),
        ])
    func loopbackListening(host: String, isLoopback: Bool) {
        #expect(NetworkExposure.isLoopback(host) == isLoopback)
    }
}

@Suite("Routing by a proxy that listens beyond loopback (configured, never bound here)")
struct ExposedRoutingTests {
    static func status(_ routing: ProxyRouting) -> Int? {
        if case .answered(let response) = routing { return response.head.status.code }
        return nil
    }

    @Test(
        "forward mode refuses this machine and private networks unless allowed; the metrics answer only loopback clients"
    )
    func exposed() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = try HTTPCache(
            configuration: .init(directory: directory.url, rules: .shared), origin: ScriptedOrigin())
        func routing(_ uri: String, host listen: String, allowed: [String] = [], fromLoopback: Bool = true) throws
            -> ProxyRouting
        {
            let proxy = CachingProxy(
                cache: cache, configuration: ProxyConfiguration(host: listen, port: 0, allowedDestinations: allowed))
            let head = try RequestHead.parsing("GET \(uri) HTTP/1.1\r\nHost: x\r\n\r\n")
            return proxy.route(head, body: ByteBuffer(), fromLoopback: fromLoopback)
        }
        #expect(Self.status(try routing("http://127.0.0.1:9/secret", host: "0.0.0.0")) == 403)
        #expect(Self.status(try routing("http://169.254.169.254/latest/meta-data", host: "0.0.0.0")) == 403)
        #expect(Self.status(try routing("http://example.com/", host: "0.0.0.0")) == nil)
        #expect(Self.status(try routing("http://127.0.0.1:9/secret", host: "0.0.0.0", allowed: ["127.0.0.1"])) == nil)
        #expect(Self.status(try routing("http://127.0.0.1:9/secret", host: "127.0.0.1")) == nil)
        #expect(Self.status(try routing("/_webcache/metrics", host: "0.0.0.0", fromLoopback: false)) == 403)
        #expect(Self.status(try routing("/_webcache/metrics", host: "0.0.0.0", fromLoopback: true)) == 200)
    }

    @Test(
        "exposed without an allow-list, a destination name that resolves to this machine is refused too; literal, allowed and loopback-only cases do not resolve"
    )
    func namesResolvingInside() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = try HTTPCache(
            configuration: .init(directory: directory.url, rules: .shared), origin: ScriptedOrigin())
        let exposed = CachingProxy(cache: cache, configuration: ProxyConfiguration(host: "0.0.0.0", port: 0))
        // This machine's own name resolves to one of its addresses (127.0.x.x in containers; skip
        // the check where it resolves to a public address or not at all).
        let name = ProcessInfo.processInfo.hostName
        let own = await exposed.resolvedRefusal(for: name)
        if ["localhost", "127.", "::1"].contains(where: { prefix in
            DestinationResolution.addresses(of: name).first?.hasPrefix(prefix) ?? false
        }) {
            #expect(own?.head.status.code == 403, "\(name) resolves inside and must be refused")
        }
        #expect(
            await exposed.resolvedRefusal(for: "does-not-exist.invalid") == nil,
            "a name that does not resolve fails on its own")
        let allowed = CachingProxy(
            cache: cache, configuration: ProxyConfiguration(host: "0.0.0.0", port: 0, allowedDestinations: [name]))
        #expect(await allowed.resolvedRefusal(for: name) == nil, "an allow-list is the operator's word")
        let loopback = CachingProxy(cache: cache, configuration: ProxyConfiguration(host: "127.0.0.1", port: 0))
        #expect(await loopback.resolvedRefusal(for: name) == nil, "a proxy on loopback serves this machine")
    }
}
