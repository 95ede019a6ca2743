import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A miss in flight: the head, and the body as it arrives, shared by every request that joined.
struct StreamedFetch: Sendable {
    var head: HTTPResponse
    var body: BodyBroadcast
    var responseTime: Date
    /// The entry being stored, when the response may be stored.
    var storing: NewEntry?
}

/// What makes concurrent misses one fetch: the method, the URL, and the request fields that most
/// often select variants, so that requests that would get different variants do not share one
/// (a value, not a string built for each miss).
struct FetchKey: Hashable, Sendable {
    var method: HTTPRequest.Method
    var url: String
    var accept: String?
    var acceptEncoding: String?
    var acceptLanguage: String?
    var authorization: String?
    var cookie: String?
    var range: String?

    init(_ request: HTTPRequest, url: String) {
        let fields = request.headerFields
        method = request.method
        self.url = url
        accept = fields[.accept]
        acceptEncoding = fields[.acceptEncoding]
        acceptLanguage = fields[.acceptLanguage]
        authorization = fields[.authorization]
        cookie = fields[.cookie]
        range = fields[.range]
    }
}

/// The outcome of one origin exchange, shared by every request that joined it.
struct FetchResult: Sendable {
    var response: OriginResponse
    var requestTime: Date
    var responseTime: Date
    var stored: CacheEntry?
    /// For a revalidation answered 304: the refreshed entry.
    var refreshed: CacheEntry?
}

extension HTTPCache {
    /// Sends a request to the origin, timing the exchange; dates a response that has no `Date`
    /// (RFC 9110 §6.6.1). An origin known to be unreachable is not tried unless `admitted`.
    func exchange(
        _ request: HTTPRequest, body: Data?, admitted: Bool = false, interim: InterimResponseHandler? = nil
    ) async throws -> (OriginResponse, Date, Date) {
        let requestTime = clock()
        var response = try await contactOrigin(request.url, admitted: admitted) { () async throws -> OriginResponse in
            guard let interim else { return try await origin.fetch(request, body: body) }
            return try await origin.stream(request, body: body, interim: interim).collected()
        }
        let responseTime = clock()
        if !response.head.headerFields.contains(.date) {
            response.head.headerFields[.date] = HTTPDate.format(responseTime)
        }
        count { $0.bytesFromOrigin += response.body.count }
        return (response, requestTime, responseTime)
    }

    /// A miss (or a reload): one coalesced origin fetch, stored if allowed. The response is
    /// answered as soon as its head arrives; the body streams to every request that joined the
    /// fetch while it is written to the store.
    ///
    /// A request that joins a fetch whose body has all arrived, and is only being stored, is
    /// answered by `onceStored` after the commit when it gives an answer (the caller's own
    /// decision from the store: a hit, as the request was never forwarded, RFC 9211 §2.1) —
    /// so a request that follows a whole answer is told it was a hit whatever the index
    /// writer's timing.
    func fetchAndRespond(
        _ request: HTTPRequest, key: CacheKey, url: URL, forward: CacheStatus.Forward, policy: CachePolicy,
        interim: InterimResponseHandler? = nil, onceStored: (() -> CacheResponse?)? = nil
    ) async throws -> CacheResponse {
        if let arriving = await rangeOfArrivingBody(request, key: key, url: url) { return arriving }
        var (result, collapsed): (StreamedFetch, Bool)
        do {
            (result, collapsed) = try await misses.valueKeptJoinable(for: FetchKey(request, url: key.url)) {
                [self] release in
                do {
                    return try await startStreamedFetch(
                        request, key: key, url: url, policy: policy, interim: interim, release: release)
                } catch {
                    await release()
                    throw error
                }
            }
            if collapsed && !mayShare(result, with: request) {
                // RFC 9111 §4: another request's answer is for this one only if the cache could
                // have stored it and served it to this one (not private, not no-store, the same
                // variant); otherwise this request makes its own.
                (result, collapsed) = (
                    try await startStreamedFetch(
                        request, key: key, url: url, policy: policy, interim: interim, release: {}),
                    false
                )
            }
        } catch let error as OriginError where error.code == .unreachable {
            throw CacheError(
                .offlineMiss, "\(url.absoluteString) is not cached and the origin is unreachable", cause: error)
        } catch let error as OriginError {
            throw CacheError(.originFailed, "fetching \(url.absoluteString) failed", cause: error)
        }
        if collapsed, result.storing != nil, let onceStored, result.body.hasArrivedWhole {
            await result.body.ended()
            if await store.entryOnItsWayWritten(key), let stored = onceStored() { return stored }
        }
        var status = CacheStatus(
            cache: cacheName, forward: forward, forwardStatus: result.head.status.code,
            stored: result.storing != nil, collapsed: collapsed)
        if let storing = result.storing {
            status.ttl = rules.freshnessLeft(of: storing.stored, at: result.responseTime)
        }
        var head = result.head
        if collapsed, let storing = result.storing {
            // What the cache stored, as it would serve it: without the fields it may not keep
            // (`private="Set-Cookie"`, `no-cache="…"` in a shared cache).
            head.headerFields = storing.stored.response.headerFields
        }
        head.headerFields = MessageFields.removingHopByHop(head.headerFields)
        head.headerFields.appendCacheStatus(status)
        if request.method == .get && head.status.code == 206 && isMedia(head) && request.headerFields[.range] != nil,
            let part = rules.storablePart(of: head), !part.isComplete,
            (part.completeLength ?? .max) <= store.configuration.maximumEntrySize
        {
            completeInBackground(request, key: key, url: url, after: result.body)
        }
        let arriving = request.method == .head ? nil : result.body
        return CacheResponse(
            head: head, content: arriving.map { .arriving($0) } ?? .bytes(Data()), cacheStatus: status, url: url)
    }

    /// Sends a request and returns once the head is in; a task pumps the body into a broadcast
    /// and the store (this call does, when the body arrived with the head), and calls `release`
    /// (ending the fetch's joinability) before the end of the body reaches any reader. A 206 is
    /// stored as a part, combined with the part stored before when they combine
    /// (``partToStore(_:head:storing:)``).
    private func startStreamedFetch(
        _ request: HTTPRequest, key: CacheKey, url: URL, policy: CachePolicy, interim: InterimResponseHandler?,
        release: @escaping @Sendable () async -> Void
    ) async throws -> StreamedFetch {
        let removalMark = store.removalMark
        let requestTime = clock()
        let origin = try await contactOrigin(url) {
            try await self.origin.stream(request, body: nil, interim: interim)
        }
        let responseTime = clock()
        var head = origin.head
        if !head.headerFields.contains(.date) {
            head.headerFields[.date] = HTTPDate.format(responseTime)
        }
        var storing =
            request.method == .get && !Self.announcesMore(than: store.configuration.maximumEntrySize, head)
            ? entryToStore(
                request, url: url, head: head, requestTime: requestTime, responseTime: responseTime,
                removalMark: removalMark, policy: policy)
            : nil
        var plan = StoringPlan(
            storing: storing, key: key, expectedLength: head.headerFields[.contentLength].flatMap { Int($0) })
        if head.status.code == 206, let entry = storing {
            plan = partToStore(request, head: head, storing: entry)
            storing = plan.storing
        }
        let body = BodyBroadcast()
        if origin.arrivedWhole {
            // The body came with the head: it is taken (and its entry put on its way into the
            // index) now, with no task to follow it and no wait, as the stream is finished.
            await pumpBody(origin.body, into: body, plan: plan, url: url, release: release)
        } else {
            let stored = plan
            CallersLoop.task { [self] in
                await pumpBody(origin.body, into: body, plan: stored, url: url, release: release)
            }
        }
        return StreamedFetch(head: head, body: body, responseTime: responseTime, storing: storing)
    }

    /// Whether `head` announces a body of more than `limit` bytes (a complete response's
    /// `Content-Length`): one the store would give up on half-way, so it is not planned for —
    /// nor said to be stored in `Cache-Status`.
    static func announcesMore(than limit: Int, _ head: HTTPResponse) -> Bool {
        guard head.status.code != 206, let length = head.headerFields[.contentLength].flatMap({ Int($0) }) else {
            return false
        }
        return length > limit
    }

    /// Rows waiting for the index past which a miss waits for them before it ends.
    static let entriesOnTheirWayBeforeWaiting = 256

    /// Copies the origin's body to the readers and the store. The entry is on its way into the
    /// index before the readers see the end, and the end does not wait for the index: a lookup
    /// in this process waits for an entry on its way (``CacheStore/lookup(_:)``), so a request
    /// that follows the response finds it stored, and a miss is not held up by the index's
    /// transaction (nor by a checkpoint of its log, which syncs to disk). The
    /// store gets `plan`'s bytes around the body (the rest of a part it combines with; the
    /// readers get the bytes before it too when the plan says so); a body
    /// of another length than announced is not stored, except a 200 cut short, which is kept as
    /// the part that arrived (RFC 9111 §3.3), never served as complete.
    func pumpBody(
        _ chunks: AsyncThrowingStream<Data, any Error>, into body: BodyBroadcast, plan: StoringPlan, url: URL?,
        release: @Sendable () async -> Void
    ) async {
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
        // Not stored (not storable, or the writer could not start): past the budget the body
        // goes to a spill file.
        if writer == nil { body.spillWhenLarge(spill) }
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
                    body.spillWhenLarge(spill)  // too large to store: the rest goes to a spill file
                }
            } catch {
                storeProblem("could not store \(url?.absoluteString ?? "?"), serving it anyway: \(error)")
                writer?.cancel()
                writer = nil
                body.spillWhenLarge(spill)
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
                    body.spillWhenLarge(spill)
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
                    // Misses faster than the index takes their rows wait for it rather than
                    // pile up rows in memory.
                    if store.entriesOnTheirWay > Self.entriesOnTheirWayBeforeWaiting {
                        await store.entriesOnTheirWayWritten()
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

    /// Whether a request that joined another's fetch may take its answer: only one the cache is
    /// storing and would serve to it without validation (RFC 9111 §4: storable, the same
    /// variant, reusable as it is — not `no-cache`, not already stale), and that no unsafe
    /// request has invalidated since it was asked for (it will not be stored either).
    func mayShare(_ fetch: StreamedFetch, with request: HTTPRequest) -> Bool {
        guard let storing = fetch.storing else { return false }
        if let mark = storing.removalMark, let key = CacheKey(request: storing.stored.request),
            store.removedMeanwhile(key, group: storing.group, since: mark)
        {
            return false
        }
        return rules.reuse(storing.stored, for: request, now: fetch.responseTime).servesStored
    }

    /// Whole media bodies fetched in the background at once (``completeInBackground``): half the
    /// connections an app's origin client keeps per host (`AsyncHTTPClientOrigin`'s 8), so that
    /// completions never take every connection from the requests of the page.
    static let maximumBackgroundCompletions = 4

    /// How the background task that completes a media body is named, before its key's URL.
    private static let completionPrefix = "complete "

    /// Whether a response is audio or video, which players fetch in ranges.
    private func isMedia(_ head: HTTPResponse) -> Bool {
        guard let type = head.headerFields[.contentType]?.lowercased() else { return false }
        return type.hasPrefix("video/") || type.hasPrefix("audio/") || type.hasPrefix("application/ogg")
    }

    /// A media range the origin answered with a 206 of less than the whole (stored as a part):
    /// the whole body is fetched once in the background and stored — the rest only, when the
    /// part is a prefix — so that the next ranges (a seek, a replay, offline) are answered from
    /// the store (Squid's `range_offset_limit` idea). The client dropping its connection, as
    /// browsers do at every seek, does not stop it. At most ``maximumBackgroundCompletions`` run
    /// at once: a client asking for the first bytes of a thousand videos must not make the cache
    /// fetch a thousand whole videos; one skipped now is completed when a range of it is asked
    /// for again.
    private func completeInBackground(_ request: HTTPRequest, key: CacheKey, url: URL, after part: BodyBroadcast) {
        var withoutRange = request
        withoutRange.headerFields[.range] = nil
        withoutRange.headerFields[.ifRange] = nil
        let whole = withoutRange
        let id = Self.completionPrefix + key.url
        backgroundTasks.withLock { tasks in
            guard tasks[id] == nil else { return }
            let running = tasks.keys.count(where: { $0.hasPrefix(Self.completionPrefix) })
            guard running < Self.maximumBackgroundCompletions else {
                logger.debug(
                    "\(url.absoluteString): not completing the media body now, \(running) completions are under way")
                return
            }
            tasks[id] = Task { [self] in
                // The part first goes to the store, so that only the rest of a prefix is fetched.
                await part.ended()
                do {
                    // Read through as it arrives, never held: the store keeps it.
                    let response = try await streamingResponse(for: whole)
                    for try await _ in response.body {}
                    if response.cacheStatus.stored != true && !response.cacheStatus.hit {
                        logger.info(
                            "\(url.absoluteString): the whole media body could not be stored (status \(response.head.status.code))"
                        )
                    }
                } catch {
                    logger.info("\(url.absoluteString): fetching the whole media body failed: \(error)")
                }
                _ = backgroundTasks.withLock { $0.removeValue(forKey: id) }
            }
        }
    }
}
