import Foundation
import GRDB
import Testing
import WebCacheStore
import WebCacheTestSupport

@Suite("Access times")
struct AccessTimeTests {
    @Test("recording hits never waits for the index: batches are written on the store's own queue, and every access reaches the index")
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
}

/// An immediate transaction on its own connection and thread, held until ``release()`` (or for
/// at most 5 seconds).
private final class IndexWriterHold: @unchecked Sendable {
    private let lock = NSLock()
    private var released = false
    private var holding: CheckedContinuation<Void, Never>?
    private var isHolding = false
    private var finished: CheckedContinuation<Void, Never>?
    private var isFinished = false
    private let letGo = DispatchSemaphore(value: 0)

    init(path: String) throws {
        let queue = try DatabaseQueue(path: path)
        Thread { [self] in
            try? queue.inTransaction(.immediate) { _ in
                signal(\.isHolding, \.holding)
                _ = letGo.wait(timeout: .now() + 5)
                lock.withLock { released = true }
                return .commit
            }
            signal(\.isFinished, \.finished)
        }.start()
    }

    var wasReleased: Bool { lock.withLock { released } }

    func acquired() async {
        await wait(\.isHolding, \.holding)
    }

    func release() async {
        letGo.signal()
        await wait(\.isFinished, \.finished)
    }

    private func signal(_ flag: ReferenceWritableKeyPath<IndexWriterHold, Bool>, _ waiter: ReferenceWritableKeyPath<IndexWriterHold, CheckedContinuation<Void, Never>?>) {
        let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            self[keyPath: flag] = true
            defer { self[keyPath: waiter] = nil }
            return self[keyPath: waiter]
        }
        continuation?.resume()
    }

    private func wait(_ flag: ReferenceWritableKeyPath<IndexWriterHold, Bool>, _ waiter: ReferenceWritableKeyPath<IndexWriterHold, CheckedContinuation<Void, Never>?>) async {
        await withCheckedContinuation { continuation in
            let done = lock.withLock { () -> Bool in
                if self[keyPath: flag] { return true }
                self[keyPath: waiter] = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}
