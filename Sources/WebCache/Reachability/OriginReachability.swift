import HTTPCaching
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which origins could not be reached, and until when requests for them skip the network.
///
/// The decisions are made under one lock and never wait; writing them to the store is left to
/// the caller (``HTTPCache``), outside the lock.
final class OriginReachability: Sendable {
    /// What a request for an origin may do now.
    enum Admission: Equatable {
        /// Nothing is known against the origin: connect.
        case reachable
        /// The origin was unreachable. `probe` is true for the one request that may try it
        /// again now that the window has passed; the others skip the network.
        case unreachable(OriginStatus, probe: Bool)
    }

    private struct State {
        var status: OriginStatus
        /// When the probe of the current window started, while it is out.
        var probeStarted: Date?
    }

    /// What is known against origins.
    private struct Table {
        /// Origins no connection could be made to.
        var unreachable: [String: State] = [:]
        /// Origins that accepted a request and let it outlive the network timeout, with when;
        /// until they answer, requests that have a usable stored response do not wait for them.
        var silent: [String: Date] = [:]
    }

    private let table: Locked<Table>
    /// How many origins each table holds (``ReachabilitySettings/maximumOrigins``).
    let capacity: Int

    /// Starts from what the store remembers, the `capacity` origins due to be tried last.
    init(remembered: [OriginStatus], capacity: Int = ReachabilitySettings().maximumOrigins) {
        self.capacity = max(1, capacity)
        var table = Table()
        for status in remembered.sorted(by: { $0.retryAfter > $1.retryAfter })
        where table.unreachable[status.origin] == nil && table.unreachable.count < self.capacity {
            table.unreachable[status.origin] = State(status: status)
        }
        self.table = Locked(table)
    }

    /// `scheme://host:port` of `url`, the unit of reachability; `nil` without a host.
    static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// What a request for `origin` may do at `now`; claims the probe when the window has passed
    /// and no other request is probing (a probe that has not reported for `probeTimeout`
    /// seconds no longer counts).
    func admission(for origin: String, now: Date, probeTimeout: Double) -> Admission {
        table.withLock { table in
            guard var state = table.unreachable[origin] else { return .reachable }
            guard now >= state.status.retryAfter else { return .unreachable(state.status, probe: false) }
            if let started = state.probeStarted, now.timeIntervalSince(started) < probeTimeout, now >= started {
                return .unreachable(state.status, probe: false)
            }
            state.probeStarted = now
            table.unreachable[origin] = state
            return .unreachable(state.status, probe: true)
        }
    }

    /// A failed connection recorded: the origin's new status, and the origin forgotten to make
    /// room for it, if one was (both to be written to the store).
    struct RecordedFailure {
        var status: OriginStatus
        var forgotten: String?
    }

    /// Records a failed connection. A new origin beyond ``capacity`` takes the place of the one
    /// due to be tried again soonest.
    func recordFailure(of origin: String, error: String, now: Date, settings: ReachabilitySettings)
        -> RecordedFailure
    {
        table.withLock { table in
            let previous = table.unreachable[origin]?.status
            // Counted without overflow: a count read back from a damaged index may be anything.
            let failures = min(previous?.failures ?? 0, Int.max - 1) + 1
            let status = OriginStatus(
                origin: origin, failures: failures, unreachableSince: previous?.unreachableSince ?? now,
                retryAfter: now.addingTimeInterval(settings.window(afterFailures: failures)), lastError: error)
            var forgotten: String?
            if previous == nil && table.unreachable.count >= capacity,
                let soonest = table.unreachable.min(by: { $0.value.status.retryAfter < $1.value.status.retryAfter })
            {
                table.unreachable[soonest.key] = nil
                forgotten = soonest.key
            }
            table.unreachable[origin] = State(status: status)
            table.silent[origin] = nil
            return RecordedFailure(status: status, forgotten: forgotten)
        }
    }

    /// Whether any origin is known to be unreachable or silent. When none is (nearly always), a
    /// request has nothing to be admitted against and an answer nothing to clear, so the caller
    /// need not work out the origin's name (``origin(of:)``, a few strings per request).
    var knowsOfTrouble: Bool {
        table.withLock { table in !table.unreachable.isEmpty || !table.silent.isEmpty }
    }

    /// Records an answer (or a connection made); returns whether the origin was unreachable.
    func recordReachable(_ origin: String) -> Bool {
        table.withLock { table in
            guard !table.unreachable.isEmpty || !table.silent.isEmpty else { return false }
            table.silent[origin] = nil
            return table.unreachable.removeValue(forKey: origin) != nil
        }
    }

    /// Ends a probe that reached no verdict (cancelled, an invalid request).
    func endProbe(of origin: String) {
        table.withLock { table in table.unreachable[origin]?.probeStarted = nil }
    }

    /// Records that a request to `origin` outlived the network timeout.
    ///
    /// Beyond ``capacity`` silent origins, the one silent longest is forgotten (its requests
    /// wait for it again).
    func recordSilence(of origin: String, now: Date) {
        table.withLock { table in
            guard table.silent[origin] == nil else { return }
            if table.silent.count >= capacity, let longest = table.silent.min(by: { $0.value < $1.value }) {
                table.silent[longest.key] = nil
            }
            table.silent[origin] = now
        }
    }

    /// Whether `origin` let a request outlive the network timeout less than `limit` seconds
    /// ago and has not answered since.
    func isSilent(_ origin: String, now: Date, limit: Double) -> Bool {
        table.withLock { table in
            guard let since = table.silent[origin] else { return false }
            if now.timeIntervalSince(since) < limit && now >= since { return true }
            table.silent[origin] = nil
            return false
        }
    }

    /// The origins known to be unreachable.
    var unreachable: [OriginStatus] {
        table.withLock { table in table.unreachable.values.map(\.status).sorted { $0.origin < $1.origin } }
    }
}
