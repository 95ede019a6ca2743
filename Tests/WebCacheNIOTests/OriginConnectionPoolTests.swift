import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import Testing
import WebCache

@testable import WebCacheNIO

@Suite("The origin connection pool")
struct OriginConnectionPoolTests {
    /// A connection without a socket. A testing channel, which may be used from any thread:
    /// these tests await between uses, and an `EmbeddedChannel` belongs to the thread it was
    /// made on (SwiftNIO reports every other use as API misuse, to become a crash).
    static func connection() async throws -> OriginConnection {
        let channel = NIOAsyncTestingChannel()
        let bound = try await channel.testingEventLoop.executeInContext {
            let handler = OriginExchangeHandler()
            try channel.pipeline.syncOperations.addHandler(handler)
            return NIOLoopBound(handler, eventLoop: channel.eventLoop)
        }
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).get()
        return OriginConnection(channel: channel, handler: bound)
    }

    /// Whether `connection` is closed, once what its loop was asked to do has run.
    static func isClosed(_ connection: OriginConnection) async -> Bool {
        await (connection.channel as? NIOAsyncTestingChannel)?.testingEventLoop.run()
        return !connection.channel.isActive
    }

    /// A clock that moves only when a test moves it, so that what is idle past the timeout does
    /// not depend on how busy the machine is.
    final class ManualClock: Sendable {
        private let time = NIOLockedValueBox(NIODeadline.uptimeNanoseconds(1_000_000_000))
        func now() -> NIODeadline { time.withLockedValue { $0 } }
        func advance(by amount: TimeAmount) { time.withLockedValue { $0 = $0 + amount } }
    }

    static func endpoint(_ index: Int) -> OriginEndpoint {
        OriginEndpoint(URL(string: "http://host\(index).test/")!)!
    }

    @Test("connections are kept per endpoint up to the limit, taken back, and closed once idle past the timeout")
    func keepAndTake() async throws {
        let pool = OriginConnectionPool(maximumIdlePerEndpoint: 2, idleTimeout: .seconds(60))
        let (a, b, c) = (try await Self.connection(), try await Self.connection(), try await Self.connection())
        pool.giveBack(a, to: Self.endpoint(1))
        pool.giveBack(b, to: Self.endpoint(1))
        pool.giveBack(c, to: Self.endpoint(1))
        #expect(await Self.isClosed(c), "a third idle connection to one endpoint is closed")
        #expect(pool.take(Self.endpoint(2), preferring: nil) == nil)
        #expect(pool.take(Self.endpoint(1), preferring: nil)?.channel === b.channel)
        #expect(pool.take(Self.endpoint(1), preferring: nil)?.channel === a.channel)
        #expect(pool.take(Self.endpoint(1), preferring: nil) == nil)

        let clock = ManualClock()
        let short = OriginConnectionPool(maximumIdlePerEndpoint: 2, idleTimeout: .milliseconds(1), now: clock.now)
        let stale = try await Self.connection()
        short.giveBack(stale, to: Self.endpoint(1))
        clock.advance(by: .milliseconds(2))
        #expect(short.take(Self.endpoint(1), preferring: nil) == nil)
        #expect(await Self.isClosed(stale))
    }

    @Test("taking a connection closes those idle past the timeout and keeps the ones given back since")
    func expiredFirst() async throws {
        let clock = ManualClock()
        let pool = OriginConnectionPool(maximumIdlePerEndpoint: 4, idleTimeout: .milliseconds(500), now: clock.now)
        let (a, b) = (try await Self.connection(), try await Self.connection())
        pool.giveBack(a, to: Self.endpoint(1))
        pool.giveBack(b, to: Self.endpoint(1))
        clock.advance(by: .milliseconds(700))
        let (c, d) = (try await Self.connection(), try await Self.connection())
        pool.giveBack(c, to: Self.endpoint(1))
        pool.giveBack(d, to: Self.endpoint(1))
        #expect(pool.take(Self.endpoint(1), preferring: nil)?.channel === d.channel)
        let (aClosed, bClosed) = (await Self.isClosed(a), await Self.isClosed(b))
        #expect(aClosed && bClosed, "the two idle past the timeout are closed")
        #expect(!(await Self.isClosed(c)))
        #expect(pool.take(Self.endpoint(1), preferring: nil)?.channel === c.channel)
        #expect(pool.take(Self.endpoint(1), preferring: nil) == nil)
    }

    @Test("with many endpoints, giving a connection back closes those idle past the timeout everywhere")
    func sweep() async throws {
        let clock = ManualClock()
        let pool = OriginConnectionPool(maximumIdlePerEndpoint: 2, idleTimeout: .milliseconds(1), now: clock.now)
        var old: [OriginConnection] = []
        for index in 0...OriginConnectionPool.endpointsBeforeSweep {
            let connection = try await Self.connection()
            pool.giveBack(connection, to: Self.endpoint(index))
            old.append(connection)
        }
        clock.advance(by: .milliseconds(2))
        pool.giveBack(try await Self.connection(), to: Self.endpoint(1_000))
        var closed = 0
        for connection in old where await Self.isClosed(connection) { closed += 1 }
        #expect(closed == old.count, "idle connections to endpoints never asked again are closed")
    }
}
