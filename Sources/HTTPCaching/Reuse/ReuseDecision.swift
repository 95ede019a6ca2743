/// What a cache may do with a stored response for a request, and why (RFC 9111 §4).
public struct ReuseDecision: Sendable, Hashable, CustomStringConvertible {
    /// The action the cache should take.
    public enum Action: Sendable, Hashable {
        /// Serve the stored response: it is fresh enough for this request.
        case useFresh
        /// Serve the stored response although it is stale, for the given reason.
        case useStale(StaleReason)
        /// Send a conditional request (``CacheRules/conditionalRequest(for:revalidating:)``) and
        /// serve the stored response only if the origin answers 304.
        case validate
        /// The stored response cannot serve this request at all; fetch a new one.
        case fetch
        /// The request said `only-if-cached` and the stored response cannot be used without the
        /// origin: answer 504 (RFC 9111 §5.2.1.7).
        case gatewayTimeout
    }

    /// Why a stale response may be served.
    public enum StaleReason: Sendable, Hashable {
        /// The request's `max-stale` accepts this much staleness (RFC 9111 §5.2.1.2).
        case maxStale
        /// Within the response's `stale-while-revalidate` window: serve, and revalidate in the
        /// background (RFC 5861 §3).
        case staleWhileRevalidate
        /// The origin cannot be reached and nothing forbids serving stale (RFC 9111 §4.2.4).
        case disconnected
    }

    /// What to do.
    public var action: Action
    /// The freshness lifetime of the stored response.
    public var freshness: Freshness
    /// The current age in whole seconds (RFC 9111 §4.2.3).
    public var age: Int
    /// `age − lifetime`: positive when stale, negative while fresh (then seconds of freshness left).
    public var staleness: Int
    /// Whether, should the origin fail (a 500, 502, 503 or 504, or no answer), the stored response
    /// may be served instead (`stale-if-error`, RFC 5861 §4, or disconnected operation, RFC 9111
    /// §4.2.4 with ``ReuseConditions/maxStaleWhenDisconnected``).
    public var mayServeStaleOnError: Bool
    /// The reasons, one rule per entry.
    public var reasons: [String] {
        get {
            guard let ageFacts else { return laterReasons }
            return [
                CacheRules.describeAge(freshness: ageFacts.freshness, age: ageFacts.age, staleness: ageFacts.staleness)
            ] + laterReasons
        }
        set {
            ageFacts = nil
            laterReasons = newValue
        }
    }

    /// The age facts the first reason describes, kept as numbers until someone reads the
    /// reasons: a hit rarely does, and the sentence costs more than the decision.
    private var ageFacts: AgeFacts?
    private var laterReasons: [String]

    private struct AgeFacts: Sendable, Hashable {
        var freshness: Freshness
        var age: Int
        var staleness: Int
    }

    init(action: Action, freshness: Freshness, age: Int, staleness: Int, mayServeStaleOnError: Bool, reasons: [String])
    {
        self.action = action
        self.freshness = freshness
        self.age = age
        self.staleness = staleness
        self.mayServeStaleOnError = mayServeStaleOnError
        self.laterReasons = reasons
    }

    /// Adds `reason` after the others. (Appending to ``reasons`` would word the description of
    /// the age at once; this keeps it for when the reasons are read.)
    public mutating func addReason(_ reason: String) {
        laterReasons.append(reason)
    }

    /// Makes the description of the current age the first reason (worded when read).
    mutating func beginWithAge() {
        ageFacts = AgeFacts(freshness: freshness, age: age, staleness: staleness)
    }

    /// Equal when every public property is, the reasons compared as worded.
    public static func == (left: ReuseDecision, right: ReuseDecision) -> Bool {
        left.action == right.action && left.freshness == right.freshness && left.age == right.age
            && left.staleness == right.staleness && left.mayServeStaleOnError == right.mayServeStaleOnError
            && left.reasons == right.reasons
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(action)
        hasher.combine(freshness)
        hasher.combine(age)
        hasher.combine(staleness)
        hasher.combine(mayServeStaleOnError)
        hasher.combine(reasons)
    }

    /// Whether the stored response may be served without contacting the origin first.
    public var servesStored: Bool {
        switch action {
        case .useFresh, .useStale: return true
        case .validate, .fetch, .gatewayTimeout: return false
        }
    }

    /// Whether the stored response is fresh.
    public var isFresh: Bool { staleness < 0 }

    /// The statuses after which a stale response may be served instead (`stale-if-error`,
    /// RFC 5861 §4: 500, 502, 503, 504).
    public static let staleIfErrorStatuses: Set<Int> = [500, 502, 503, 504]

    /// Whether the stored response may be served instead of an origin answer with `status`
    /// (``mayServeStaleOnError`` and a status of ``staleIfErrorStatuses``).
    public func servesStale(insteadOf status: Int) -> Bool {
        mayServeStaleOnError && Self.staleIfErrorStatuses.contains(status)
    }

    /// The decision in one sentence, e.g. `stale by 42 s (max-age=60, age 102 s); revalidate`.
    public var description: String { reasons.joined(separator: "; ") }
}

/// Circumstances of a lookup that are not in the messages themselves.
public struct ReuseConditions: Sendable, Hashable {
    /// Whether the origin is believed reachable. When false the cache is disconnected and may
    /// serve stale responses that nothing forbids (RFC 9111 §4.2.4).
    public var originReachable: Bool
    /// The most staleness accepted when disconnected, in seconds; `nil` means no limit.
    public var maxStaleWhenDisconnected: Int?

    /// Creates conditions.
    public init(originReachable: Bool = true, maxStaleWhenDisconnected: Int? = nil) {
        self.originReachable = originReachable
        self.maxStaleWhenDisconnected = maxStaleWhenDisconnected
    }

    /// The usual case: the origin can be asked.
    public static let connected = ReuseConditions()
}

extension ReuseDecision.Action: CustomStringConvertible {
    /// The action in words, e.g. `serve stale and revalidate in the background`.
    public var description: String {
        switch self {
        case .useFresh: return "serve from cache"
        case .useStale(.maxStale): return "serve stale (max-stale)"
        case .useStale(.staleWhileRevalidate): return "serve stale and revalidate in the background"
        case .useStale(.disconnected): return "serve stale (offline)"
        case .validate: return "revalidate with the origin"
        case .fetch: return "fetch from the origin"
        case .gatewayTimeout: return "answer 504 (only-if-cached)"
        }
    }
}
