import Foundation
import GRDB
import Testing
import WebCacheStore
import WebCacheTestSupport

@Suite("Access times")
struct AccessTimeTests {
    @Test(
        "recording hits never waits for the index: batches are written on the store's own queue, and every access reaches the index"
    )
    func batchesOffTheCallersThread() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            let store = try CacheStore(configuration: .test(directory, clock: clock))
            let urls = (0..<150).map { "https://example.com/a/\($0)" }
            for url in urls {
                clock.advance(1)
                try store.store(Entries.make(url), body: Entries.body(100))
            }
            var entries: [CacheEntry] = []
            for url in urls { entries.append(try #require(try store.lookup(Entries.key(url)).first)) }
            clock.advance(60)  // past the access-time resolution of the last ones stored

            // Another connection holds the index's writer, as another process's write would.
            let writer = try IndexWriterHold(path: directory.appendingPathComponent("index.sqlite").path)
            await writer.acquired()
            // More distinct entries than one batch holds: a write of the index is due meanwhile.
            for entry in entries.prefix(140).reversed() {
                clock.advance(1)
                store.recordAccess(entry, at: clock.now)
            }
            #expect(!writer.wasReleased, "recordAccess waited for the index's writer")
            await writer.release()

            // Most recently used first: 0 was touched last, 139 first; 140… only when stored.
            let order = try store.entries().map(\.key.url)
            #expect(order == Array(urls.prefix(140)) + urls.suffix(10).reversed())
        }
    }

    @Test(
        "access times are kept to the minute: a hit soon after the last one recorded for the entry writes nothing, a later one does"
    )
    func toTheMinute() async throws {
        try await TemporaryDirectory.with { directory in
            let clock = TestClock()
            let store = try CacheStore(configuration: .test(directory, clock: clock))
            let (a, b) = ("https://example.com/a", "https://example.com/b")
            try store.store(Entries.make(a), body: Entries.body(100))
            try store.store(Entries.make(b), body: Entries.body(100))
            let entryA = try #require(try store.lookup(Entries.key(a)).first)
            let entryB = try #require(try store.lookup(Entries.key(b)).first)
            clock.advance(100)
            store.recordAccess(entryA, at: clock.now)
            clock.advance(1)
            store.recordAccess(entryB, at: clock.now)
            clock.advance(1)
            store.recordAccess(entryA, at: clock.now)  // within the minute of A's last: not written
            store.flushAccesses()
            #expect(try store.entries().map(\.key.url) == [b, a])
            clock.advance(60)  // the store's access-time resolution
            store.recordAccess(entryA, at: clock.now)
            store.flushAccesses()
            #expect(try store.entries().map(\.key.url) == [a, b])
        }
    }
}

/// An immediate transaction on its own connection and thread, held until ``release()`` (or for
/// at most a minute).
private final class IndexWriterHold: @unchecked Sendable {
    private let lock = NSLock()
    private var released = false
    private let holding = Signal()
    private let finished = Signal()
    private let letGo = DispatchSemaphore(value: 0)

    init(path: String) throws {
        let queue = try DatabaseQueue(path: path)
        Thread { [self] in
            try? queue.inTransaction(.immediate) { _ in
                holding.fire()
                // Released by the test; the limit only keeps a failed test from hanging. It is
                // long: a test suite running in parallel on two cores can keep the test's task
                // from resuming for seconds.
                _ = letGo.wait(timeout: .now() + 60)
                lock.withLock { released = true }
                return .commit
            }
            finished.fire()
        }.start()
    }

    var wasReleased: Bool { lock.withLock { released } }

    func acquired() async {
        await holding.wait()
    }

    func release() async {
        letGo.signal()
        await finished.wait()
    }
}

/// Something that happens once, for async code to wait for.
private final class Signal: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private var waiter: CheckedContinuation<Void, Never>?

    func fire() {
        let waiter = lock.withLock {
            fired = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume()
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let alreadyFired = lock.withLock {
                if !fired { waiter = continuation }
                return fired
            }
            if alreadyFired { continuation.resume() }
        }
    }
}
