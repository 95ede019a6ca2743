import HTTPTypes

/// The parsed directives of a `Cache-Control` field (or of a targeted field such as
/// `CDN-Cache-Control`), with typed, conservative accessors for every standard directive.
///
/// Reading rules (RFC 9111 §4.2.1 and §5.2):
/// - names are case-insensitive; unknown extensions are kept in ``directives`` and otherwise
///   ignored;
/// - an argument inside a quoted string never counts as a directive of its own;
/// - a time value that is not a non-negative integer is ``TimeValue/invalid`` (a response with
///   one is treated as stale); values beyond 2^31 are capped at 2^31;
/// - a directive repeated with different values is ``TimeValue/invalid`` too — RFC 9111 §4.2.1
///   allows either "first wins" or "stale", and the cautious reading is "stale";
/// - restrictive directives (`no-store`, `no-cache`, `private`, `must-revalidate`, …) are honoured
///   however they are written; permissive ones (`public`, `immutable`) only when well formed.
///
/// ```swift
/// let cc = CacheControl(fields: response.headerFields)
/// cc.maxAge      // .seconds(3600)
/// cc.noCache     // .fields(["set-cookie"])
/// ```
public struct CacheControl: Sendable, Hashable, CustomStringConvertible {
    /// Every directive in field order, including unknown and malformed ones.
    public var directives: [CacheDirective]

    /// A time-valued directive (`max-age`, `s-maxage`, `max-stale`, …).
    public enum TimeValue: Sendable, Hashable {
        /// A valid number of seconds.
        case seconds(Int)
        /// Present without an argument where one is allowed (only `max-stale`: any staleness).
        case unlimited
        /// Present but unreadable, or repeated with conflicting values.
        case invalid
    }

    /// A directive that applies either to the whole message or only to named fields
    /// (`no-cache` and `private`, RFC 9111 §5.2.2.4 and §5.2.2.7).
    public enum FieldScope: Sendable, Hashable {
        /// The directive applies to the whole response.
        case all
        /// The directive applies only to these fields (lower-cased names).
        case fields([String])
    }

    /// Parses the values of one or more field lines.
    public init(values: [String]) {
        self.directives = CacheControlParser.parse(values)
    }

    /// Parses every `Cache-Control` line of `fields`.
    public init(fields: HTTPFields) {
        // One line, as nearly every message has: its value parsed (or found parsed) without an
        // array of the values to hold it.
        var line: String?
        for field in fields where field.name == .cacheControl {
            guard line == nil else {
                self.init(values: fields[values: .cacheControl])
                return
            }
            line = field.value
        }
        self.init(directives: line.map(CacheControlParser.parse(line:)) ?? [])
    }

    /// Creates the value from directives.
    public init(directives: [CacheDirective]) {
        self.directives = directives
    }

    /// Whether no directive at all is present.
    public var isEmpty: Bool { directives.isEmpty }

    /// The field value, normalised.
    public var description: String { directives.map(\.description).joined(separator: ", ") }

    /// Whether a directive with this name is present, in any form.
    public func contains(_ name: String) -> Bool {
        has(name.lowercased())
    }

    /// ``contains(_:)`` for a name already in lowercase (the readers' literals): no copy.
    private func has(_ lowercaseName: String) -> Bool {
        directives.contains { $0.name == lowercaseName }
    }

    /// All directives with this name.
    public func all(_ name: String) -> [CacheDirective] {
        let name = name.lowercased()
        return directives.filter { $0.name == name }
    }

    // MARK: Shared by requests and responses

    /// `max-age` (RFC 9111 §5.2.1.1, §5.2.2.1).
    public var maxAge: TimeValue? { timeValue("max-age") }
    /// `no-cache`; for a request it is always ``FieldScope/all``.
    public var noCache: FieldScope? { fieldScope("no-cache") }
    /// `no-store` (RFC 9111 §5.2.1.5, §5.2.2.5).
    public var noStore: Bool { has("no-store") }
    /// `no-transform` (RFC 9111 §5.2.1.6, §5.2.2.6).
    public var noTransform: Bool { has("no-transform") }
    /// `stale-if-error` (RFC 5861 §4), request or response.
    public var staleIfError: TimeValue? { timeValue("stale-if-error") }

    // MARK: Response directives

    /// `s-maxage` (RFC 9111 §5.2.2.10).
    public var sharedMaxAge: TimeValue? { timeValue("s-maxage") }
    /// `private` (RFC 9111 §5.2.2.7).
    public var `private`: FieldScope? { fieldScope("private") }
    /// `public` (RFC 9111 §5.2.2.9).
    public var `public`: Bool { hasWellFormedFlag("public") }
    /// `must-revalidate` (RFC 9111 §5.2.2.2).
    public var mustRevalidate: Bool { has("must-revalidate") }
    /// `proxy-revalidate` (RFC 9111 §5.2.2.8).
    public var proxyRevalidate: Bool { has("proxy-revalidate") }
    /// `must-understand` (RFC 9111 §5.2.2.3).
    public var mustUnderstand: Bool { has("must-understand") }
    /// `immutable` (RFC 8246).
    public var immutable: Bool { hasWellFormedFlag("immutable") }
    /// `stale-while-revalidate` (RFC 5861 §3).
    public var staleWhileRevalidate: TimeValue? { timeValue("stale-while-revalidate") }

    // MARK: Request directives

    /// `max-stale` (RFC 9111 §5.2.1.2); ``TimeValue/unlimited`` without an argument.
    public var maxStale: TimeValue? { timeValue("max-stale", allowsMissingArgument: true) }
    /// `min-fresh` (RFC 9111 §5.2.1.3).
    public var minFresh: TimeValue? { timeValue("min-fresh") }
    /// `only-if-cached` (RFC 9111 §5.2.1.7).
    public var onlyIfCached: Bool { has("only-if-cached") }

    // MARK: Readers

    /// The readers take names in lowercase (their own literals), and read the directives in
    /// place: a hit asks for several of them.
    func timeValue(_ name: String, allowsMissingArgument: Bool = false) -> TimeValue? {
        var result: TimeValue?
        for directive in directives where directive.name == name {
            let value: TimeValue
            if directive.argument == nil {
                value = allowsMissingArgument && directive.isWellFormed ? .unlimited : .invalid
            } else if let seconds = directive.deltaSeconds, directive.isWellFormed {
                value = .seconds(seconds)
            } else {
                value = .invalid
            }
            if let previous = result, previous != value { return .invalid }
            result = value
        }
        return result
    }

    func fieldScope(_ name: String) -> FieldScope? {
        guard has(name) else { return nil }
        var names: [String] = []
        for directive in directives where directive.name == name {
            guard let argument = directive.argument else { return .all }
            let listed = argument.split(separator: ",").map { $0.trimmingHTTPWhitespace().lowercased() }
                .filter { !$0.isEmpty }
            // A qualified form we cannot read is applied to the whole message (the cautious way).
            guard !listed.isEmpty, listed.allSatisfy({ $0.allSatisfy(\.isHTTPTokenCharacter) }) else { return .all }
            names.append(contentsOf: listed)
        }
        return .fields(names)
    }

    func hasWellFormedFlag(_ name: String) -> Bool {
        all(name).contains { $0.isWellFormed && $0.argument == nil }
    }
}

extension CacheControl.TimeValue {
    /// The number of seconds, or `nil` when unlimited or invalid.
    public var seconds: Int? {
        if case .seconds(let value) = self { return value }
        return nil
    }
}
