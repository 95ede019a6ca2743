import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// A miss (or a reload): one coalesced origin fetch, stored if allowed. The response is
    /// answered as soon as its head arrives; the body streams to every request that joined the
    /// fetch while it is written to the store.
    ///
    /// A request that joins a fetch whose body has all arrived, and is only being stored, is
    /// answered by `onceStored` after the commit when it gives an answer (the caller's own
    /// decision from the store: a hit, as the request was never forwarded, RFC 9211 §2.1) —
    /// so a request that follows a whole answer is told it was a hit whatever the index
    /// writer's timing.
    nonisolated(nonsending) func fetchAndRespond(
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
        let head = result.head
        if request.method == .get && head.status.code == 206 && isMedia(head)
            && request.headerFields.contains(.range),
            let part = rules.storablePart(of: head), !part.isComplete,
            (part.completeLength ?? .max) <= store.configuration.maximumEntrySize
        {
            completeInBackground(request, key: key, url: url, after: result.body)
        }
        return answer(result, to: request, url: url, forward: forward, collapsed: collapsed)
    }

    /// What a fetch answers `request` with once its head is in (a miss's, a validation's new
    /// response): `Cache-Status` saying whether it is stored and for how long it is fresh; for a
    /// request that joined another's fetch, the head as the cache stored it; the body as it
    /// arrives (none for `HEAD`).
    func answer(
        _ fetch: StreamedFetch, to request: HTTPRequest, url: URL, forward: CacheStatus.Forward, collapsed: Bool
    ) -> CacheResponse {
        var status = CacheStatus(
            cache: cacheName, forward: forward, forwardStatus: fetch.head.status.code,
            stored: fetch.storing != nil, collapsed: collapsed)
        var head = fetch.head
        if let storing = fetch.storing {
            status.ttl = rules.freshnessLeft(of: storing.stored, at: fetch.responseTime)
            // What the cache stored, as it would serve it: without the fields it may not keep
            // (`private="Set-Cookie"`, `no-cache="…"` in a shared cache).
            if collapsed { head.headerFields = storing.stored.response.headerFields }
        }
        var fields = MessageFields.removingHopByHop(head.headerFields)
        // The stored entry shares the origin's fields, so adding `Cache-Status` copies them: once,
        // with room for it and for the `Via` a proxy adds (a copy that only fits `Cache-Status`
        // is copied again, at twice the size, for `Via`).
        fields.reserveCapacity(fields.count + Self.fieldsAddedToAnAnswer)
        fields.appendCacheStatus(status)
        head.headerFields = fields
        let content: CacheResponse.Content = request.method == .head ? .bytes(Data()) : .arriving(fetch.body)
        return CacheResponse(head: head, content: content, cacheStatus: status, url: url)
    }

    /// Fields an answer from a fetch may still get after the engine's own: `Cache-Status`, and a
    /// proxy's `Via`.
    static let fieldsAddedToAnAnswer = 2

    /// Sends a request and returns once the head is in, streaming the body as
    /// ``streamedFetch(_:of:key:url:policy:requestTime:removalMark:release:)`` says.
    nonisolated(nonsending) private func startStreamedFetch(
        _ request: HTTPRequest, key: CacheKey, url: URL, policy: CachePolicy, interim: InterimResponseHandler?,
        release: @escaping @Sendable () async -> Void
    ) async throws -> StreamedFetch {
        let removalMark = store.removalMark
        let requestTime = clock()
        let origin = try await contactOrigin(url) {
            try await self.origin.stream(request, body: nil, interim: interim)
        }
        return await streamedFetch(
            origin, of: request, key: key, url: url, policy: policy, requestTime: requestTime,
            removalMark: removalMark, release: release)
    }

    /// The fetch of `request` once `origin`'s head is in: a task pumps the body into a broadcast
    /// and the store (this call does, when the body arrived with the head), and calls `release`
    /// (ending the fetch's joinability) before the end of the body reaches any reader. A 206 is
    /// stored as a part, combined with the part stored before when they combine
    /// (``partToStore(_:head:storing:)``). `request` is what is stored as asked for (a
    /// revalidation's, without its validators); `removalMark` the store's from before it was sent.
    nonisolated(nonsending) func streamedFetch(
        _ origin: OriginStream, of request: HTTPRequest, key: CacheKey, url: URL, policy: CachePolicy,
        requestTime: Date, removalMark: RemovalMark?, release: @escaping @Sendable () async -> Void
    ) async -> StreamedFetch {
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
            storing: storing, key: key, expectedLength: head.headerFields.value(.contentLength).flatMap { Int($0) })
        if head.status.code == 206, let entry = storing {
            plan = partToStore(request, head: head, storing: entry)
            storing = plan.storing
        }
        // Not stored, it is no other request's to join or read: let go as it is read.
        let body = BodyBroadcast(readOnce: storing == nil)
        if origin.arrivedWhole {
            // The body came with the head: it is taken (and its entry put on its way into the
            // index) now, with no task to follow it and no wait, as the stream is finished.
            await pumpBody(origin.body, into: body, plan: plan, url: url, pacing: origin.pacing, release: release)
        } else {
            let stored = plan
            CallersLoop.task { [self] in
                await pumpBody(
                    origin.body, into: body, plan: stored, url: url, pacing: origin.pacing, release: release)
            }
        }
        return StreamedFetch(head: head, body: body, responseTime: responseTime, storing: storing)
    }

    /// Whether `head` announces a body of more than `limit` bytes (a complete response's
    /// `Content-Length`): one the store would give up on half-way, so it is not planned for —
    /// nor said to be stored in `Cache-Status`.
    static func announcesMore(than limit: Int, _ head: HTTPResponse) -> Bool {
        guard head.status.code != 206, let length = head.headerFields.value(.contentLength).flatMap({ Int($0) }) else {
            return false
        }
        return length > limit
    }

    /// Whether a request that joined another's fetch may take its answer: only one the cache is
    /// storing and would serve to it without validation (RFC 9111 §4: storable, the same
    /// variant, reusable as it is — not `no-cache`, not already stale), that no unsafe
    /// request has invalidated since it was asked for (it will not be stored either), and whose
    /// body is still kept whole for more readers (not one the store gave up on half-way and
    /// only its first reader reads, ``BodyBroadcast/storingStopped(pacing:)``). When it may, the
    /// body is kept whole for this request from then on.
    func mayShare(_ fetch: StreamedFetch, with request: HTTPRequest) -> Bool {
        guard let storing = fetch.storing else { return false }
        if let mark = storing.removalMark, let key = CacheKey(request: storing.stored.request),
            store.removedMeanwhile(key, group: storing.group, since: mark)
        {
            return false
        }
        return rules.reuse(storing.stored, for: request, now: fetch.responseTime).servesStored
            && fetch.body.admitsAnotherReader()
    }

}
