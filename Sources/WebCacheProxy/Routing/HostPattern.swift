import HTTPCaching

/// A host name pattern in an allow-list or an interception list: `example.com` matches it and
/// its sub-domains, `*.example.com` its sub-domains only, an address only itself. Case and a
/// trailing dot do not matter.
struct HostPattern: Sendable {
    private let name: String
    private let subdomainsOnly: Bool

    init(_ pattern: String) {
        var name = Self.normalized(pattern)
        subdomainsOnly = name.hasPrefix("*.")
        if subdomainsOnly { name.removeFirst(2) }
        self.name = name
    }

    func matches(_ host: String) -> Bool {
        HostNames.host(Self.normalized(host), isWithin: name, subdomainsOnly: subdomainsOnly)
    }

    private static func normalized(_ host: String) -> String {
        var host = host.lowercased()
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}
