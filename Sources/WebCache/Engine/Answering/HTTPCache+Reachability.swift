import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// The origins that could not be reached and are left alone for now, with when each will be
    /// tried again (see ``Configuration/reachability``).
    public var unreachableOrigins: [OriginStatus] { reachability.unreachable }

    /// What a request for `url` may do now; see ``OriginReachability/admission(for:now:probeTimeout:)``.
    func admission(for url: URL) -> OriginReachability.Admission {
        guard let settings = reachabilitySettings, reachability.knowsOfTrouble,
            let origin = OriginReachability.origin(of: url)
        else {
            return .reachable
        }
        return reachability.admission(
            for: origin, now: clock(), probeTimeout: settings.maximumBackoff.seconds)
    }

    /// The error for a request that skips an origin known to be unreachable.
    func skippedOrigin(_ status: OriginStatus) -> OriginError {
        count { $0.unreachableSkips += 1 }
        let left = max(0, status.retryAfter.timeIntervalSince(clock()))
        return OriginError(
            .unreachable,
            "\(status.origin) is unreachable (\(status.failures) failed connection\(status.failures == 1 ? "" : "s"): \(status.lastError)); next attempt in \(String(format: "%.1f", left)) s",
            connectionFailed: true)
    }

    /// Runs `operation` (one exchange with the origin of `url`) unless that origin is known to
    /// be unreachable, and learns from how it ends: a connection that could not be made starts
    /// or lengthens the back-off window, anything else from the origin ends it. `admitted` when
    /// the caller has already been let through (a probe).
    nonisolated(nonsending) func contactOrigin<T>(
        _ url: URL?, admitted: Bool = false, _ operation: () async throws -> T
    ) async throws -> T {
        guard let settings = reachabilitySettings, let url else {
            return try await operation()
        }
        // The origin's name is worked out only when some origin is in trouble or this exchange
        // fails; an origin without a host is not tracked.
        if !admitted, reachability.knowsOfTrouble, let origin = OriginReachability.origin(of: url),
            case .unreachable(let status, probe: false) = reachability.admission(
                for: origin, now: clock(), probeTimeout: settings.maximumBackoff.seconds)
        {
            throw skippedOrigin(status)
        }
        do {
            let value = try await operation()
            originAnswered(url)
            return value
        } catch let error as OriginError where error.connectionFailed {
            guard let origin = OriginReachability.origin(of: url) else { throw error }
            let recorded = reachability.recordFailure(
                of: origin, error: Self.shortReason(error), now: clock(), settings: settings)
            let status = recorded.status
            logger.info(
                "\(origin) is unreachable (\(error.message)); requests skip it for \(String(format: "%.0f", settings.window(afterFailures: status.failures))) s"
            )
            do {
                if let forgotten = recorded.forgotten {
                    logger.info(
                        "\(forgotten) is no longer remembered as unreachable, to make room: at most \(reachability.capacity) are (ReachabilitySettings.maximumOrigins)"
                    )
                    try store.removeOriginStatus(forgotten)
                }
                try store.saveOriginStatus(status)
            } catch {
                storeProblem("could not record that \(origin) is unreachable: \(error)")
            }
            throw error
        } catch let error as OriginError where error.code == .invalidRequest || error.code == .requestBodyTooLarge {
            // The request's fault: no verdict on the origin.
            endProbe(of: url)
            throw error
        } catch is CancellationError {
            endProbe(of: url)
            throw CancellationError()
        } catch {
            originAnswered(url)
            throw error
        }
    }

    /// Ends a probe of `url`'s origin that reached no verdict; a probe exists only while the
    /// origin is known to be unreachable.
    private func endProbe(of url: URL) {
        guard reachability.knowsOfTrouble, let origin = OriginReachability.origin(of: url) else { return }
        reachability.endProbe(of: origin)
    }

    /// An answer from `url`'s origin: it is reachable again, if it was thought not to be.
    private func originAnswered(_ url: URL) {
        guard reachability.knowsOfTrouble, let origin = OriginReachability.origin(of: url) else { return }
        originAnswered(origin)
    }

    private func originAnswered(_ origin: String) {
        guard reachability.recordReachable(origin) else { return }
        logger.info("\(origin) answers again")
        do {
            try store.removeOriginStatus(origin)
        } catch {
            storeProblem("could not record that \(origin) answers again: \(error)")
        }
    }

    /// What went wrong, in a line, for `stats` and `explain`.
    static func shortReason(_ error: OriginError) -> String {
        error.message.count > 200 ? String(error.message.prefix(200)) + "…" : error.message
    }
}
