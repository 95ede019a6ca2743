/// Host name rules shared by the allow and block lists, the proxy's destination and
/// interception lists and the preloader's host list: one place for what "within a domain" means.
package enum HostNames {
    /// Whether `host` is `domain` or one of its sub-domains (`a.example.com` is within
    /// `example.com`; `badexample.com` is not). Both must be normalised alike (lower case, no
    /// trailing dot); with `subdomainsOnly`, `domain` itself does not count.
    package static func host(_ host: String, isWithin domain: String, subdomainsOnly: Bool = false) -> Bool {
        guard !domain.isEmpty else { return false }
        if host.hasSuffix("." + domain) { return true }
        return !subdomainsOnly && host == domain
    }
}
