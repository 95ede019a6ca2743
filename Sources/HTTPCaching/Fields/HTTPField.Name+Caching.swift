import HTTPTypes

extension HTTPField.Name {
    /// `Pragma` (RFC 9111 §5.4).
    public static let pragma = HTTPField.Name("Pragma")!
    /// `Keep-Alive` (RFC 9110 §7.6.1, hop-by-hop).
    public static let keepAlive = HTTPField.Name("Keep-Alive")!
    /// `Proxy-Connection` (non-standard, hop-by-hop).
    public static let proxyConnection = HTTPField.Name("Proxy-Connection")!
    /// `Cache-Status` (RFC 9211).
    public static let cacheStatus = HTTPField.Name("Cache-Status")!
    /// `Warning` (obsoleted by RFC 9111, removed from stored responses).
    public static let warning = HTTPField.Name("Warning")!
}
