/// Which addresses are this machine's or its private network's, for the defaults a proxy
/// exposed beyond loopback needs: it must not become a way into them (SSRF), and its metrics
/// are for the machine's own eyes.
package enum NetworkExposure {
    /// Whether `host` (a listening address) is loopback only.
    package static func isLoopback(_ host: String) -> Bool {
        let host = host.lowercased().trimmingBrackets
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Whether `host`, a literal address or `localhost`, is on this machine or a private,
    /// link-local or unique-local network (RFC 1918, RFC 3927, RFC 4193, RFC 4291). Names other
    /// than `localhost` are not resolved here: an allow-list is the way to be strict about them.
    package static func isInternal(_ host: String) -> Bool {
        let host = host.lowercased().trimmingBrackets
        if host == "localhost" || host.hasSuffix(".localhost") || isLoopback(host) || host == "0.0.0.0" || host == "::"
        {
            return true
        }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false).map { Int($0) }
        if octets.count == 4, octets.allSatisfy({ $0.map { (0...255).contains($0) } ?? false }) {
            let (a, b) = (octets[0]!, octets[1]!)
            return a == 10 || a == 127 || a == 0 || (a == 172 && (16...31).contains(b)) || (a == 192 && b == 168)
                || (a == 169 && b == 254)
                || (a == 100 && (64...127).contains(b))
        }
        guard host.contains(":") else { return false }
        if host.hasPrefix("fc") || host.hasPrefix("fd") || host.hasPrefix("fe8") || host.hasPrefix("fe9")
            || host.hasPrefix("fea")
            || host.hasPrefix("feb")
        {
            return true
        }
        if host.hasPrefix("::ffff:") { return isInternal(String(host.dropFirst(7))) }
        return false
    }
}

extension String {
    fileprivate var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
