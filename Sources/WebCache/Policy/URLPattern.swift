import HTTPCaching

/// A URL wildcard pattern: `*` matches any run of characters, everything else itself, without
/// regard to case. `https://ads.example.com/*`, `*/banners/*`, `*.gif`.
public struct URLPattern: Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The pattern text.
    public let pattern: String
    private let parts: [Substring]

    /// Creates a pattern.
    public init(_ pattern: String) {
        self.pattern = pattern
        self.parts = pattern.lowercased().split(separator: "*", omittingEmptySubsequences: false)
    }

    /// Creates a pattern from a literal.
    public init(stringLiteral value: String) { self.init(value) }

    /// Decodes a pattern from a string.
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the pattern as a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(pattern)
    }

    /// The pattern text.
    public var description: String { pattern }

    /// Whether `text` matches the whole pattern.
    public func matches(_ text: String) -> Bool {
        let text = text.lowercased()
        guard parts.count > 1 else { return text == pattern.lowercased() }
        var rest = Substring(text)
        guard rest.hasPrefix(parts[0]) else { return false }
        rest = rest.dropFirst(parts[0].count)
        for part in parts.dropFirst().dropLast() where !part.isEmpty {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return rest.hasSuffix(parts[parts.count - 1])
    }

    static func hostMatches(_ host: String, suffix: String) -> Bool {
        let host = host.lowercased()
        let suffix = suffix.lowercased().trimmingPrefix("*.").trimmingPrefix(".")
        return HostNames.host(host, isWithin: suffix)
    }
}

extension StringProtocol {
    fileprivate func trimmingPrefix(_ prefix: String) -> String {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : String(self)
    }
}
