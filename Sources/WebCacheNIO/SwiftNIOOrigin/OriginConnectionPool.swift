import NIOConcurrencyHelpers
import NIOCore
import WebCache

/// A kept-alive connection to an origin and its exchange handler.
struct OriginConnection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<OriginExchangeHandler>
}

/// Idle kept-alive connections by endpoint, at most ``maximumIdlePerEndpoint`` each, for at
/// most ``idleTimeout``. A connection the origin closes while idle leaves the pool then.
final class OriginConnectionPool: Sendable {
    private struct Idle {
        var connection: OriginConnection
        var since: NIODeadline
    }

    let maximumIdlePerEndpoint: Int
    let idleTimeout: TimeAmount
    /// The time now: `NIODeadline.now` in use, a clock a test moves by hand in tests.
    private let now: @Sendable () -> NIODeadline
    private let idle = NIOLockedValueBox([OriginEndpoint: [Idle]]())

    init(
        maximumIdlePerEndpoint: Int, idleTimeout: TimeAmount,
        now: @escaping @Sendable () -> NIODeadline = { NIODeadline.now() }
    ) {
        self.maximumIdlePerEndpoint = maximumIdlePerEndpoint
        self.idleTimeout = idleTimeout
        self.now = now
    }

    /// An idle connection to `endpoint`, one on `loop` if there is one; `nil` when none is left.
    /// With `idleAtMost`, only one given back that recently (others stay for other requests).
    func take(
        _ endpoint: OriginEndpoint, preferring loop: (any EventLoop)?, idleAtMost: TimeAmount? = nil
    ) -> OriginConnection? {
        let now = self.now()
        var expired: [OriginConnection] = []
        let taken = idle.withLockedValue { table -> OriginConnection? in
            guard let slot = table.index(forKey: endpoint) else { return nil }
            // In place: a copy of the list taken out of the table would be copied again on write.
            let taken = take(
                from: &table.values[slot], now: now, preferring: loop, idleAtMost: idleAtMost, expired: &expired)
            if table.values[slot].isEmpty { table.remove(at: slot) }
            return taken
        }
        for connection in expired { connection.channel.close(promise: nil) }
        return taken
    }

    /// Keeps `connection` for the next request to `endpoint`, or closes it when the pool is full.
    /// With many endpoints (a forward proxy), connections idle past the timeout anywhere are
    /// closed too, so that hosts never asked again do not keep theirs.
    func giveBack(_ connection: OriginConnection, to endpoint: OriginEndpoint) {
        let now = self.now()
        var expired: [OriginConnection] = []
        let kept = idle.withLockedValue { table -> Bool in
            if table.count > Self.endpointsBeforeSweep {
                for (key, var connections) in table {
                    expired += removeExpired(from: &connections, now: now)
                    table[key] = connections.isEmpty ? nil : connections
                }
            }
            guard connection.channel.isActive, table[endpoint, default: []].count < maximumIdlePerEndpoint else {
                return false
            }
            table[endpoint, default: []].append(Idle(connection: connection, since: now))
            return true
        }
        for old in expired { old.channel.close(promise: nil) }
        if !kept { connection.channel.close(promise: nil) }
    }

    /// How many endpoints may have idle connections before giving one back sweeps them all.
    static let endpointsBeforeSweep = 64

    /// Takes an idle connection out of `connections` (one on `loop` if there is one, the most
    /// recently given back otherwise), after moving those idle past ``idleTimeout`` to `expired`.
    private func take(
        from connections: inout [Idle], now: NIODeadline, preferring loop: (any EventLoop)?, idleAtMost: TimeAmount?,
        expired: inout [OriginConnection]
    ) -> OriginConnection? {
        expired += removeExpired(from: &connections, now: now)
        let recent = { (idle: Idle) in idleAtMost.map { now - idle.since <= $0 } ?? true }
        let index =
            connections.lastIndex { recent($0) && loop != nil && $0.connection.channel.eventLoop === loop! }
            ?? connections.lastIndex(where: recent)
        guard let index else { return nil }
        return connections.remove(at: index).connection
    }

    /// Takes the connections idle past ``idleTimeout`` out of `connections` and returns them.
    /// Connections are given back in time order and taken out without reordering the rest, so
    /// the expired ones are the first few, and usually none.
    private func removeExpired(from connections: inout [Idle], now: NIODeadline) -> [OriginConnection] {
        let kept = connections.firstIndex { now - $0.since <= idleTimeout } ?? connections.endIndex
        guard kept > 0 else { return [] }
        let expired = connections[..<kept].map(\.connection)
        connections.removeSubrange(..<kept)
        return expired
    }

    /// Forgets `channel` (closed by the origin while idle).
    func forget(_ channel: any Channel, of endpoint: OriginEndpoint) {
        idle.withLockedValue { table in
            table[endpoint]?.removeAll { $0.connection.channel === channel }
            if table[endpoint]?.isEmpty == true { table[endpoint] = nil }
        }
    }

    /// Closes every idle connection.
    func closeAll() {
        let all = idle.withLockedValue { table -> [OriginConnection] in
            defer { table.removeAll() }
            return table.values.flatMap { $0.map(\.connection) }
        }
        for connection in all { connection.channel.close(promise: nil) }
    }
}
