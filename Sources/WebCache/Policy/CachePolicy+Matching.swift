import HTTPCaching
import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CachePolicy {
    /// Whether `request` is blocked (answered empty, never fetched).
    public func blocks(_ url: URL) -> Bool {
        // Reading the host costs more than the rest when nothing is blocked.
        guard !block.hostSuffixes.isEmpty || !block.urlPatterns.isEmpty else { return false }
        let host = url.host ?? ""
        return block.hostSuffixes.contains { URLPattern.hostMatches(host, suffix: $0) }
            || block.urlPatterns.contains { $0.matches(url.absoluteString) }
    }

    /// Whether the cache handles `request`; false means it passes through uncached.
    public func allows(_ request: HTTPRequest, url: URL) -> Bool {
        guard enabled else { return false }
        guard let allow else { return true }
        let host = url.host ?? ""
        if !allow.hosts.isEmpty, !allow.hosts.contains(where: { URLPattern.hostMatches(host, suffix: $0) }) {
            return false
        }
        if !allow.urlPatterns.isEmpty, !allow.urlPatterns.contains(where: { $0.matches(url.absoluteString) }) {
            return false
        }
        if !allow.userAgentSuffixes.isEmpty {
            let agent = request.headerFields.value(.userAgent) ?? ""
            if !allow.userAgentSuffixes.contains(where: { agent.hasSuffix($0) }) { return false }
        }
        return true
    }

    /// The first lifetime rule for a response to `url` with `contentType`.
    public func lifetimeRule(for url: URL, contentType: String?) -> LifetimeRule? {
        let host = url.host ?? ""
        let type = contentType?.lowercased() ?? ""
        return lifetimes.first { rule in
            if let hosts = rule.hosts, !hosts.isEmpty,
                !hosts.contains(where: { URLPattern.hostMatches(host, suffix: $0) })
            {
                return false
            }
            if let patterns = rule.urlPatterns, !patterns.isEmpty,
                !patterns.contains(where: { $0.matches(url.absoluteString) })
            {
                return false
            }
            if let types = rule.contentTypes, !types.isEmpty,
                !types.contains(where: { type.hasPrefix($0.lowercased()) })
            {
                return false
            }
            return true
        }
    }

    /// Decodes a policy; every field is optional and defaults as in
    /// ``init(enabled:offlineMaxStale:offlineStrict:networkTimeout:allow:block:lifetimes:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = CachePolicy()
        self.init(
            enabled: try container.decodeIfPresent(Bool.self, forKey: .enabled) ?? defaults.enabled,
            offlineMaxStale: try container.decodeIfPresent(Int.self, forKey: .offlineMaxStale)
                ?? defaults.offlineMaxStale,
            offlineStrict: try container.decodeIfPresent(Bool.self, forKey: .offlineStrict) ?? false,
            networkTimeout: try Self.decodeNetworkTimeout(container),
            allow: try container.decodeIfPresent(AllowList.self, forKey: .allow),
            block: try container.decodeIfPresent(BlockList.self, forKey: .block) ?? defaults.block,
            lifetimes: try container.decodeIfPresent([LifetimeRule].self, forKey: .lifetimes) ?? [])
        sharedSetCookie = try container.decodeIfPresent(SetCookieHandling.self, forKey: .sharedSetCookie) ?? .keep
    }

    /// `networkTimeout`: seconds (0 or `off` turn the bound off), never negative or not a number.
    private static func decodeNetworkTimeout(_ container: KeyedDecodingContainer<CodingKeys>) throws -> Double? {
        if (try? container.decodeIfPresent(String.self, forKey: .networkTimeout)) == "off" { return 0 }
        guard let seconds = try container.decodeIfPresent(Double.self, forKey: .networkTimeout) else { return nil }
        guard seconds.isFinite, seconds >= 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .networkTimeout, in: container,
                debugDescription: "networkTimeout must be a number of seconds ≥ 0 (or off), not \(seconds)")
        }
        return seconds
    }
}

extension CachePolicy.AllowList {
    /// Decodes an allow-list; missing lists are empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            hosts: try container.decodeIfPresent([String].self, forKey: .hosts) ?? [],
            urlPatterns: try container.decodeIfPresent([URLPattern].self, forKey: .urlPatterns) ?? [],
            userAgentSuffixes: try container.decodeIfPresent([String].self, forKey: .userAgentSuffixes) ?? [])
    }
}

extension CachePolicy.BlockList {
    /// Decodes a block-list; missing lists are empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            hostSuffixes: try container.decodeIfPresent([String].self, forKey: .hostSuffixes) ?? [],
            urlPatterns: try container.decodeIfPresent([URLPattern].self, forKey: .urlPatterns) ?? [])
    }
}

/// A configuration that cannot be read or understood.
public struct PolicyError: CodedError {
    /// The codes of this error: static members of `ErrorCode` where `Domain` is this type, declared
    /// below. More may be added.
    public typealias Code = ErrorCode<PolicyError>

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong.
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }
}

extension ErrorCode where Domain == PolicyError {
    /// A file the configuration names (or the configuration itself) cannot be read.
    public static var unreadableFile: Self { Self("unreadableFile") }
    /// The configuration was read but is not valid (bad syntax, a negative capacity, a
    /// file that holds no certificate).
    public static var invalidConfiguration: Self { Self("invalidConfiguration") }
}
