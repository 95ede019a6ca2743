import HTTPCaching
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// For a forward proxy exposed beyond loopback without an allow-list: whether a destination
/// *name* resolves to this machine or a private network (literal addresses are checked without
/// resolving, by ``NetworkExposure``), so that a name pointing inside is no way in either.
/// Verdicts are kept a minute per name; resolution runs on NIO's thread pool, never on an
/// event loop.
package final class DestinationResolution: Sendable {
    private struct Verdict {
        var addresses: [String]
        var until: NIODeadline
    }

    private let verdicts = NIOLockedValueBox(BoundedTable<String, Verdict>(capacity: 4096))
    static let keptFor: TimeAmount = .seconds(60)

    /// The addresses `host` (a name) resolves to (kept a minute); empty when it does not resolve.
    func resolve(_ host: String) async -> [String] {
        let host = host.lowercased()
        let now = NIODeadline.now()
        if let kept = verdicts.withLockedValue({ $0[host] }), kept.until > now { return kept.addresses }
        let addresses = (try? await NIOThreadPool.singleton.runIfActive { Self.addresses(of: host) }) ?? []
        verdicts.withLockedValue { verdicts in
            verdicts[host] = Verdict(addresses: addresses, until: .now() + Self.keptFor)
        }
        return addresses
    }

    /// Whether `host` (a name) resolves to an internal address; a name that does not resolve is
    /// not (the connection will fail on its own).
    func resolvesInternally(_ host: String) async -> Bool {
        await resolve(host).contains(where: NetworkExposure.isInternal)
    }

    /// The addresses `host` resolves to, as text (`getaddrinfo`, blocking).
    package static func addresses(of host: String) -> [String] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &results) == 0, let first = results else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [String] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let info = next {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            if info.pointee.ai_family == AF_INET, let address = info.pointee.ai_addr {
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
                    var raw = ipv4.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                }
                addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            } else if info.pointee.ai_family == AF_INET6, let address = info.pointee.ai_addr {
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
                    var raw = ipv6.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                }
                addresses.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
            next = info.pointee.ai_next
        }
        return addresses
    }
}

extension CachingProxy {
    /// Whether forward mode must resolve `host` before going there: exposed beyond loopback,
    /// no allow-list, and a name (literal addresses are judged as they are).
    func mustResolve(_ host: String) -> Bool {
        configuration.upstream == nil && configuration.allowedDestinations.isEmpty
            && !NetworkExposure.isLoopback(configuration.host)
            && (try? SocketAddress(ipAddress: host.filter { $0 != "[" && $0 != "]" }, port: 0)) == nil
            && host.lowercased() != "localhost"
    }

    /// The refusal for a destination name that resolves inside this machine or its network,
    /// when the proxy must check (``mustResolve(_:)``); `nil` when it may go there.
    nonisolated(nonsending) package func resolvedRefusal(for host: String) async -> ProxyResponse? {
        guard mustResolve(host), await destinations.resolvesInternally(host) else { return nil }
        return .error(403, "\(host) resolves to this machine or a private network, which this proxy does not serve")
    }
}
