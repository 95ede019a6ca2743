#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a ``CachingProxy`` listens and where it forwards.
public struct ProxyConfiguration: Sendable {
    /// The address to listen on; loopback unless set explicitly.
    public var host: String
    /// The port; 0 picks a free one.
    public var port: Int
    /// Reverse mode: every request goes to this origin (`http://127.0.0.1:8000`). Forward mode
    /// when `nil`: requests carry absolute URLs (`GET http://host/path`).
    public var upstream: URL?
    /// Forward mode: the destination hosts allowed (host names or suffixes); empty allows all.
    public var allowedDestinations: [String]
    /// The largest request body accepted.
    public var maximumRequestBodySize: Int
    /// The name written in `Via`.
    public var viaName: String

    /// Creates a configuration listening on 127.0.0.1.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, upstream: URL? = nil, allowedDestinations: [String] = [],
        maximumRequestBodySize: Int = 64 << 20, viaName: String = "webcache"
    ) {
        self.host = host
        self.port = port
        self.upstream = upstream
        self.allowedDestinations = allowedDestinations
        self.maximumRequestBodySize = maximumRequestBodySize
        self.viaName = viaName
    }
}
