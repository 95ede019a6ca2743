import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// Copies the origin's body to the readers and the store. The entry is on its way into the
    /// index before the readers see the end, and the end does not wait for the index: a lookup
    /// in this process waits for an entry on its way (``CacheStore/lookup(_:)``), so a request
    /// that follows the response finds it stored, and a miss is not held up by the index's
    /// transaction (nor by a checkpoint of its log, which syncs to disk). The
    /// store gets `plan`'s bytes around the body (the rest of a part it combines with; the
    /// readers get the bytes before it too when the plan says so); a body
    /// of another length than announced is not stored, except a 200 cut short, which is kept as
    /// the part that arrived (RFC 9111 §3.3), never served as complete. A body read once follows
    /// the origin client's `pacing`, when it has one (``BodyBroadcast/follow(_:)``), and so does
    /// one whose storing stops half-way while only its first reader reads it
    /// (``BodyBroadcast/storingStopped(pacing:)``).
    nonisolated(nonsending) func pumpBody(
        _ chunks: AsyncThrowingStream<Data, any Error>, into body: BodyBroadcast, plan: StoringPlan, url: URL?,
        pacing: OriginBodyPacing? = nil, release: @Sendable () async -> Void
    ) async {
        if let pacing { body.follow(pacing) }
        var writer: BodyWriter?
        let store = self.store
        let spill: @Sendable () throws -> SpillFile = { try store.makeSpillFile() }
        if let storing = plan.storing {
            do {
                writer = try plan.key.map { store.makeWriter(for: storing, key: $0) } ?? store.makeWriter(for: storing)
            } catch {
                storeProblem("could not store \(url?.absoluteString ?? "?"), serving it anyway: \(error)")
                writer = nil
            }
        }
        // No `expect(size:)` here: blocks reserved up front for a streamed body lengthened a full
        // cache's p99 at 1 MB (docs/Benchmarks.md, "A body file's blocks found at once: measured,
        // kept off the miss path").
        /// Storing stopped (or never started) with the body still to come: a body only its first
        /// reader reads is read once from here on, at its pace; past the budget what is held goes
        /// to a spill file.
        var stoppedStoring = false
        func stopStoring() {
            guard !stoppedStoring else { return }
            stoppedStoring = true
            body.storingStopped(pacing: pacing)
            body.spillWhenLarge(spill)
        }
        // Not stored (not storable, or the writer could not start).
        if writer == nil { stopStoring() }
        // What the readers get of `before` comes first in the body they read, and in the file.
        let beforeCount = plan.before?.count ?? 0
        let beforeForReaders = plan.readersGetBefore ? beforeCount : 0
        var forReaders = 0
        var bodyKeptInFile = false
        /// Writes `chunk` to the store; once the store's file has them, chunks the readers got
        /// need not all stay in memory. A failed write stops storing, not the answer.
        func write(_ chunk: Data) {
            do {
                try writer?.write(chunk)
                if let writer, !writer.isAbandoned {
                    if !bodyKeptInFile, let written = writer.writtenBody() {
                        body.keep(in: written, bodyStartsAt: beforeCount - beforeForReaders)
                        bodyKeptInFile = true
                    }
                    if bodyKeptInFile { body.bodyInFile(upTo: forReaders) }
                } else if writer != nil {
                    stopStoring()  // too large to store
                }
            } catch {
                storeProblem("could not store \(url?.absoluteString ?? "?"), serving it anyway: \(error)")
                writer?.cancel()
                writer = nil
                stopStoring()
            }
        }
        var received = 0
        do {
            if let before = plan.before {
                do {
                    try await copy(before) { chunk in
                        if plan.readersGetBefore {
                            body.append(chunk)
                            forReaders += chunk.count
                        }
                        write(chunk)
                    }
                } catch {
                    // Bytes the readers get are a broken answer; bytes only the store gets are a
                    // stored neighbour gone bad: the new part is not stored, but still answered.
                    if plan.readersGetBefore { throw error }
                    storeProblem("could not store \(url?.absoluteString ?? "?"), serving it anyway: \(error)")
                    writer?.cancel()
                    writer = nil
                    stopStoring()
                }
            }
            for try await chunk in chunks {
                body.append(chunk)
                received += chunk.count
                forReaders += chunk.count
                count { $0.bytesFromOrigin += chunk.count }
                write(chunk)
            }
            do {
                if plan.expectedLength == nil || plan.expectedLength == received { body.arrivedWhole() }
                if let expected = plan.expectedLength, received != expected {
                    logger.debug(
                        "not storing \(url?.absoluteString ?? "?"): \(received) body bytes where \(expected) were announced"
                    )
                    writer?.cancel()
                } else {
                    if let after = plan.after, writer != nil { try await copy(after) { write($0) } }
                    let url = url
                    _ = try writer?.commitWithoutWaiting { [self] result in
                        if case .failure(let error) = result {
                            notStored(
                                error, "could not store \(url?.absoluteString ?? "?"), served it anyway: \(error)")
                        }
                    }
                    // Misses faster than the index takes their rows wait for it, a little at a
                    // time, rather than pile up rows in memory; never long for a stuck disk.
                    if !(await store.keepPaceWithIndex()) {
                        logger.debug("the index is behind: went on without waiting for it longer")
                    }
                }
            } catch {
                writer?.cancel()
                notStored(error, "could not store \(url?.absoluteString ?? "?"), served it anyway: \(error)")
            }
            await release()
            body.finish()
        } catch {
            keepCutOff(writer, plan: plan, received: received, url: url)
            await release()
            body.fail(error)
        }
    }

    /// Stored bytes copied at a time (a new part's neighbours in the part it combines with).
    static let storedCopyChunk = 256 << 10

    /// Hands `slice` to `each` a chunk at a time, letting other work run between chunks (a
    /// stored part of many megabytes is copied on the caller's event loop).
    private func copy(_ slice: StoredBodySlice, _ each: (Data) -> Void) async throws {
        var offset = 0
        while offset < slice.count {
            let chunk = try slice.read(from: offset, upTo: Self.storedCopyChunk)
            offset += chunk.count
            each(chunk)
            if offset < slice.count { await Task.yield() }
        }
    }
}
