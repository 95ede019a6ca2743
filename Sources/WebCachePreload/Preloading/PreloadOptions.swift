import WebCache

/// How far and how hard a ``Preloader`` goes.
public struct PreloadOptions: Sendable {
    /// Which hosts subresources and crawled pages may come from.
    public enum Scope: Sendable, Hashable {
        /// The page's own site: the same host, or the same last two labels of a domain name
        /// (`www.example.com` and `static.example.com`; no public-suffix list, so
        /// `a.co.uk` and `b.co.uk` count as one site).
        case sameSite
        /// The page's site and these hosts (or their subdomains).
        case sameSiteAnd([String])
        /// Any host.
        case anywhere
    }

    /// Where resources may come from.
    public var scope: Scope = .sameSite
    /// How many levels of `<a href>` links to follow from each page (0: the pages given only).
    public var depth = 0
    /// The most pages loaded in one run (links past it are left alone).
    public var maximumPages = 100
    /// The most body bytes fetched in one run; resources past it fail as over the limit.
    public var maximumBytes = 512 << 20
    /// How long one run may take; resources not started by then fail as over the limit.
    public var timeLimit: Duration = .seconds(600)
    /// Requests in flight at once, in total. HTTP/2 browsers run 100 streams per connection;
    /// HTTP/1.1 browsers 6 connections per host and a few dozen in all.
    public var concurrency = 32
    /// Requests in flight at once to one host.
    public var concurrencyPerHost = 16
    /// Whether to record each page's manifest, which pins its resources until it is removed.
    public var pin = true
    /// The request mode for every fetch: `.default` reuses fresh responses, `.revalidate`
    /// refreshes a preloaded page as a unit, `.reload` fetches everything again.
    public var mode: RequestMode = .default
    /// The `User-Agent` sent (some sites vary their markup by it).
    public var userAgent = "WebCache-Preloader/1.0"

    /// The defaults: same site, no crawling, pinned.
    public init() {}
}
