import Dispatch
import Foundation
import HTTPCaching
import Testing
import WebCacheTestSupport

@testable import WebCacheStore

@Suite("Entries stored without waiting for the index")
struct CommitWithoutWaitingTests {
    /// Holds the first batch of rows on its way into the index until ``release`` is signalled.
    final class HeldWriter: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        private let first = Locked(true)

        func hold(_ urls: [String]) {
            guard
                first.withLock({ first in
                    defer { first = false }
                    return first
                })
            else { return }
            entered.signal()
            // A bound only for a test that never releases it; a loaded run can take seconds between.
            _ = release.wait(timeout: .now() + .seconds(60))
        }
    }

    static func openStore(_ directory: URL, held: HeldWriter) throws -> CacheStore {
        var configuration = CacheStore.Configuration.test(directory)
        configuration.beforeWritingRows = { held.hold($0) }
        return try CacheStore(configuration: configuration)
    }

    /// Starts `body` on a thread of its own; the task gives its result.
    static func started<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) -> Task<Value, any Error> {
        Task { try await onOwnThread(body) }
    }

    @Test(
        "the writer returns at once; a lookup, the statistics and a listing wait for the entry and find it, before the index has it and after"
    )
    func readersWaitForTheEntry() async throws {
        try await TemporaryDirectory.with { directory in
            let held = HeldWriter()
            let store = try Self.openStore(directory, held: held)
            let url = "https://example.com/a"
            let writer = try store.makeWriter(for: Entries.make(url))
            try writer.write(Entries.body(4000))
            let written = Locked<Result<CacheEntry, any Error>?>(nil)
            #expect(try writer.commitWithoutWaiting { result in written.withLock { $0 = result } })
            await onOwnThread { held.entered.wait() }
            // Held on its way in: nothing is in the index yet, and the readers wait.
            #expect(written.withLock { $0 == nil })
            #expect(store.memory.isOnItsWay(Entries.key(url)))
            let lookup = Self.started { try store.lookup(Entries.key(url)) }
            let statistics = Self.started { try store.statistics() }
            try await Task.sleep(for: .milliseconds(100))
            #expect(written.withLock { $0 == nil })
            held.release.signal()
            let entries = try await lookup.value
            let entry = try #require(entries.first)
            #expect(byteDifference(try store.readBody(entry), Entries.body(4000)) == nil)
            #expect(try await statistics.value.entries == 1)
            #expect(try store.entries().map(\.key.url) == [url])
            #expect(!store.memory.isOnItsWay(Entries.key(url)))
            let result = try #require(written.withLock { $0 })
            #expect(try result.get().id == entry.id)
        }
    }

    @Test(
        "a lookup that must not block says the entry is on its way; waiting for it suspends until the index has it"
    )
    func lookupWithoutBlocking() async throws {
        try await TemporaryDirectory.with { directory in
            let held = HeldWriter()
            let store = try Self.openStore(directory, held: held)
            let url = "https://example.com/a"
            let key = Entries.key(url)
            let writer = try store.makeWriter(for: Entries.make(url))
            try writer.write(Entries.body(100))
            #expect(try writer.commitWithoutWaiting { _ in })
            await onOwnThread { held.entered.wait() }
            #expect(try store.lookupWithRevision(key, entryOnItsWay: .report) == nil)
            // A bounded wait runs out while the writer is held; the index alone has nothing yet.
            #expect(!(await store.entryOnItsWayWritten(key, atMost: .milliseconds(50))))
            #expect(try store.lookupWithRevision(key, entryOnItsWay: .ignore)?.entries == [])
            #expect(
                try store.lookupWithRevision(Entries.key("https://example.com/other"), entryOnItsWay: .report)?.entries
                    == [])
            let arrived = Locked(false)
            let waiting = Task {
                #expect(await store.entryOnItsWayWritten(key, atMost: .seconds(10)))
                arrived.withLock { $0 = true }
            }
            try await Task.sleep(for: .milliseconds(100))
            #expect(!arrived.withLock { $0 })
            held.release.signal()
            await waiting.value
            let found = try #require(try store.lookupWithRevision(key, entryOnItsWay: .report))
            #expect(found.entries.map(\.key.url) == [url])
        }
    }

    @Test(
        "an entry whose URL was removed after its request went out is turned away: its writer hears why, its body file goes"
    )
    func turnedAwayOnItsWay() async throws {
        try await TemporaryDirectory.with { directory in
            let held = HeldWriter()
            held.release.signal()
            let store = try Self.openStore(directory, held: held)
            let url = "https://example.com/large"
            var new = Entries.make(url)
            new.removalMark = store.removalMark
            try store.remove(url: URL(string: url)!)
            let writer = try store.makeWriter(for: new)
            try writer.write(Entries.body(64 << 10))
            let done = DispatchSemaphore(value: 0)
            let error = Locked<StoreError?>(nil)
            #expect(
                try writer.commitWithoutWaiting { result in
                    if case .failure(let failure) = result { error.withLock { $0 = failure as? StoreError } }
                    done.signal()
                })
            await onOwnThread { _ = done.wait(timeout: .now() + .seconds(10)) }
            #expect(error.withLock { $0?.code } == .removedMeanwhile)
            #expect(try store.lookup(Entries.key(url)).isEmpty)
            #expect(store.files.namespaceFiles().filter { $0.hasSuffix(BodyFiles.bodySuffix) } == store.spareFileNames)
        }
    }

    @Test("an entry on its way when its URL is removed is written first, then removed and counted")
    func removedOnItsWay() async throws {
        try await TemporaryDirectory.with { directory in
            let held = HeldWriter()
            let store = try Self.openStore(directory, held: held)
            let url = "https://example.com/large"
            let writer = try store.makeWriter(for: Entries.make(url))
            try writer.write(Entries.body(64 << 10))
            #expect(try writer.commitWithoutWaiting())
            await onOwnThread { held.entered.wait() }
            let removal = Self.started { try store.remove(url: URL(string: url)!) }
            try await Task.sleep(for: .milliseconds(50))
            held.release.signal()
            #expect(try await removal.value == 1)
            #expect(try store.lookup(Entries.key(url)).isEmpty)
            #expect(store.files.namespaceFiles().filter { $0.hasSuffix(BodyFiles.bodySuffix) } == store.spareFileNames)
        }
    }

    @Test("what is on its way when the process exits is written first: another store on the directory finds it")
    func writtenAtExit() async throws {
        try await TemporaryDirectory.with { directory in
            let held = HeldWriter()
            let store = try Self.openStore(directory, held: held)
            let url = "https://example.com/late"
            let writer = try store.makeWriter(for: Entries.make(url))
            try writer.write(Entries.body(100))
            #expect(try writer.commitWithoutWaiting())
            await onOwnThread { held.entered.wait() }
            let elsewhere = try TemporaryDirectory()
            defer { elsewhere.remove() }
            var another: CacheStore? = try CacheStore(configuration: .test(elsewhere.url))
            weak let closed = another
            // What the atexit handler runs.
            let exiting = Self.started { WritesAtExit.writeAll() }
            try await Task.sleep(for: .milliseconds(50))
            // While it waits for the held writer, another store is not kept open.
            another = nil
            #expect(closed == nil)
            held.release.signal()
            try await exiting.value
            let other = try CacheStore(configuration: .test(directory, memory: 0))
            #expect(try other.lookup(Entries.key(url)).count == 1)
        }
    }

    @Test("an exit waits a bounded time for a writer that is stuck, then for one that is not")
    func exitWaitIsBounded() async throws {
        try await TemporaryDirectory.with { directory in
            let held = HeldWriter()
            let store = try Self.openStore(directory, held: held)
            let writer = try store.makeWriter(for: Entries.make("https://example.com/stuck"))
            #expect(try writer.commitWithoutWaiting())
            await onOwnThread { held.entered.wait() }
            #expect(!(await onOwnThread { store.newRows.waitForSubmittedRows(atMost: .milliseconds(50)) }))
            held.release.signal()
            #expect(await onOwnThread { store.newRows.waitForSubmittedRows(atMost: .seconds(10)) })
            #expect(await onOwnThread { store.newRows.waitForSubmittedRows(atMost: .milliseconds(1)) })
        }
    }
}
