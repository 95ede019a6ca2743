/// The app's rules on top of HTTP caching (lifetimes, sliding expiry, allow and block lists),
/// changeable at run time and loadable from a YAML file (`CachePolicy.load(from:)` in
/// WebCacheYAML).
///
/// ```yaml
/// enabled: true
/// offlineMaxStale: 604800          # serve up to a week stale when the origin is unreachable
/// networkTimeout: 3                # after 3 s without an answer, serve what is stored
/// sharedSetCookie: strip           # a shared cache keeps Set-Cookie from other users
/// allow:
///   hosts: [example.com]           # only these hosts (and their subdomains) are cached
/// block:
///   hostSuffixes: [doubleclick.net]
///   urlPatterns: ["*/ads/*"]       # answered with an empty response, never fetched
/// lifetimes:
///   - contentTypes: [text/css, application/javascript]
///     ttl: 2592000                 # replaces the response's own lifetime
///   - contentTypes: [image/]
///     ttl: 3600
///   - hosts: [api.example.com]
///     defaultTTL: 60               # only when the response gives no lifetime
///     slidingExpiry: true          # each hit extends the app-set expiry
/// ```
public struct CachePolicy: Sendable, Hashable, Codable {
    /// When false, every request goes to the origin and nothing is stored (an app's switch to stop caching).
    public var enabled: Bool
    /// How stale a stored response may be served when the origin is unreachable, in seconds;
    /// `nil` means without limit.
    public var offlineMaxStale: Int?
    /// When false (the default), offline serving also covers responses that RFC 9111 §4.2.4
    /// would not serve unvalidated (`no-cache`, `must-revalidate` pages): reading offline is
    /// the app's explicit wish. When true, the RFC is followed strictly.
    public var offlineStrict: Bool
    /// Seconds a request waits for the origin when a stored response could answer it offline;
    /// then that response is served and the exchange goes on in the background (Workbox's
    /// `networkTimeoutSeconds`). `0` turns the bound off; `nil` leaves it to the front door
    /// (``HTTPCache/Configuration/networkTimeout``).
    public var networkTimeout: Double?
    /// When set, only matching traffic is cached; the rest passes through uncached.
    public var allow: AllowList?
    /// Matching requests get an empty synthetic response and never reach the network.
    public var block: BlockList
    /// Lifetime rules; the first that matches a response applies.
    public var lifetimes: [LifetimeRule]
    /// What a shared cache does with a storable response that sets a cookie (ignored by a
    /// private cache): keep it as RFC 9111 allows (the default), store it without its
    /// `Set-Cookie` fields, or not store it.
    public var sharedSetCookie: SetCookieHandling = .keep

    /// What a shared cache does with `Set-Cookie` (``sharedSetCookie``).
    public enum SetCookieHandling: String, Sendable, Hashable, Codable, CaseIterable {
        /// Stored and served with the response (RFC 9111; what the conformance suite requires):
        /// right when the cookie is the same for everyone, wrong for a session cookie.
        case keep
        /// Stored without its `Set-Cookie` fields (as Varnish's rules do): the client whose
        /// request fetched it gets the cookie, no other client does.
        case strip
        /// Not stored: every such response goes to the origin.
        case doNotStore
    }

    enum CodingKeys: String, CodingKey {
        case enabled, offlineMaxStale, offlineStrict, networkTimeout, allow, block, lifetimes, sharedSetCookie
    }

    /// Creates a policy; the default caches everything by RFC 9111 and serves stale offline
    /// for up to 30 days.
    public init(
        enabled: Bool = true, offlineMaxStale: Int? = 30 * 86_400, offlineStrict: Bool = false,
        networkTimeout: Double? = nil,
        allow: AllowList? = nil, block: BlockList = .init(), lifetimes: [LifetimeRule] = []
    ) {
        self.enabled = enabled
        self.offlineMaxStale = offlineMaxStale
        self.offlineStrict = offlineStrict
        self.networkTimeout = networkTimeout
        self.allow = allow
        self.block = block
        self.lifetimes = lifetimes
    }

    /// Traffic the cache handles; the rest passes through (filters by host, path and content type).
    public struct AllowList: Sendable, Hashable, Codable {
        /// Hosts, each matching itself and its subdomains.
        public var hosts: [String]
        /// URL patterns.
        public var urlPatterns: [URLPattern]
        /// `User-Agent` suffixes: a request whose User-Agent ends with one is cached.
        public var userAgentSuffixes: [String]

        enum CodingKeys: String, CodingKey {
            case hosts, urlPatterns, userAgentSuffixes
        }

        /// Creates an allow-list; empty lists do not restrict.
        public init(hosts: [String] = [], urlPatterns: [URLPattern] = [], userAgentSuffixes: [String] = []) {
            self.hosts = hosts
            self.urlPatterns = urlPatterns
            self.userAgentSuffixes = userAgentSuffixes
        }
    }

    /// Requests that are answered with an empty response (ad and tracker filtering).
    public struct BlockList: Sendable, Hashable, Codable {
        /// Host suffixes: `doubleclick.net` blocks it and every subdomain.
        public var hostSuffixes: [String]
        /// URL patterns.
        public var urlPatterns: [URLPattern]

        enum CodingKeys: String, CodingKey {
            case hostSuffixes, urlPatterns
        }

        /// Creates a block-list.
        public init(hostSuffixes: [String] = [], urlPatterns: [URLPattern] = []) {
            self.hostSuffixes = hostSuffixes
            self.urlPatterns = urlPatterns
        }
    }

    /// How long matching responses live, overriding or completing HTTP's answer.
    public struct LifetimeRule: Sendable, Hashable, Codable {
        /// Hosts (with subdomains) the rule applies to; empty for any.
        public var hosts: [String]?
        /// URL patterns the rule applies to; empty for any.
        public var urlPatterns: [URLPattern]?
        /// Content-type prefixes (`text/css`, `image/`); empty for any.
        public var contentTypes: [String]?
        /// A lifetime in seconds that replaces the response's own (an app's own cache time).
        /// Counted up to 2^31 seconds (about 68 years), as RFC 9111 caps its own; 0 or less
        /// makes each use revalidate.
        public var ttl: Int?
        /// A lifetime in seconds used only when the response gives none; capped as ``ttl`` is.
        public var defaultTTL: Int?
        /// Whether a hit extends the app-set expiry by the rule's lifetime (content read often
        /// stays, content not read ages out).
        public var slidingExpiry: Bool?

        /// Creates a rule.
        public init(
            hosts: [String]? = nil, urlPatterns: [URLPattern]? = nil, contentTypes: [String]? = nil,
            ttl: Int? = nil, defaultTTL: Int? = nil, slidingExpiry: Bool? = nil
        ) {
            self.hosts = hosts
            self.urlPatterns = urlPatterns
            self.contentTypes = contentTypes
            self.ttl = ttl
            self.defaultTTL = defaultTTL
            self.slidingExpiry = slidingExpiry
        }
    }
}
