/// How one request uses the cache; the six `URLRequest.CachePolicy` cases, in HTTP terms.
public enum RequestMode: String, Sendable, Hashable, CaseIterable, Codable {
    /// RFC 9111: fresh responses are served, stale ones revalidated.
    case `default`
    /// Skip the cache for this request (but store what comes back).
    case reload
    /// Like ``reload``, and ask caches between here and the origin to do the same
    /// (`Cache-Control: no-cache`, `Pragma: no-cache`).
    case reloadIgnoringRemoteCaches = "reload-ignoring-remote-caches"
    /// Serve any stored response, however stale; go to the network only on a miss.
    case preferCache = "prefer-cache"
    /// Serve any stored response, however stale; never use the network: 504 on a miss
    /// (`only-if-cached`).
    case onlyCache = "only-cache"
    /// Always validate a stored response with the origin before serving it.
    case revalidate
}
