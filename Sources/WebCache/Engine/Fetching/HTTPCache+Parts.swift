import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What goes to the store with a body from the origin: the entry, the stored bytes to write
/// before and after the body (the rest of a stored part it combines with, read a chunk at a time
/// as they are copied), and the body's announced length.
struct StoringPlan: Sendable {
    var storing: NewEntry?
    /// The key of the stored request, when the fetch has it (then the store does not work it out
    /// again).
    var key: CacheKey?
    var before: StoredBodySlice?
    var after: StoredBodySlice?
    /// Whether the readers get `before` too, ahead of the origin's body (a completed prefix: the
    /// client is sent the whole); otherwise only the store gets it.
    var readersGetBefore = false
    /// The length the body must have to be stored (`Content-Length`, or a part's range).
    var expectedLength: Int?
}

/// Parts of a representation (RFC 9111 §3.3, §3.4): a stored 206, or a 200 cut short, is an
/// entry whose head is a 206 with the `Content-Range` it holds. A range within it is a hit; a
/// new part that combines with it (the same strong `ETag` and length, overlapping or adjacent)
/// is stored with it as one entry — a 200 once they make the whole; a full GET for a stored
/// prefix asks the origin for the rest only.
extension HTTPCache {
    /// The step for a request whose selected variant is a stored part: served from it when its
    /// ranges lie within the part (fresh, or stale where allowed); a full GET of a prefix is
    /// completed; anything else goes to the origin, whose answer may combine with the part.
    func planForPart(
        _ entry: CacheEntry, part: ContentRange, request: HTTPRequest, key: CacheKey, url: URL, mode: RequestMode,
        decision: ReuseDecision
    ) -> Step? {
        let offline = mode == .onlyCache || rules.directives(for: request).onlyIfCached
        if request.headerFields.contains(.range),
            rules.rangesWithin(part, for: request, stored: entry.stored) != nil
        {
            switch decision.action {
            case .useFresh, .useStale, .gatewayTimeout: return nil  // served (or refused) as any stored response
            case .fetch, .validate: break
            }
        } else if request.method == .get, !request.headerFields.contains(.range), part.range.lowerBound == 0,
            !offline,
            !hasConditionals(request),
            entry.stored.response.headerFields.value(.eTag).flatMap({ EntityTag(parsing: $0) })?.isWeak == false
        {
            // Only with a strong ETag: the rest is asked for with If-Range, and parts combine only
            // under one strong validator.
            return .completePart(entry, part: part, key: key, url: url)
        }
        if offline { return .answer(gatewayTimeout(url: url)) }
        return .fetch(request, key: key, url: url, forward: .partial)
    }

    /// What to store for a 206 `head`: the part alone, or combined with the stored part of the
    /// same variant (the newest head's fields, RFC 9111 §3.4). Nothing when a complete response
    /// with the same strong validator is stored: it holds every byte already.
    func partToStore(_ request: HTTPRequest, head: HTTPResponse, storing: NewEntry) -> StoringPlan {
        guard let part = rules.storablePart(of: head), let url = storing.stored.request.url,
            let key = CacheKey(method: .get, url: url)
        else {
            return StoringPlan(storing: nil)
        }
        var plan = StoringPlan(storing: storing, expectedLength: part.range.count)
        if part.isComplete {
            // All of it (`bytes=0-` answered whole): stored as the 200 it amounts to.
            plan.storing?.stored.response = rules.headForPart(storing.stored.response, part: part)
            return plan
        }
        let candidates = (try? store.lookup(key)) ?? []
        guard let existing = select(candidates, for: request, rules: rules) else { return plan }
        guard rules.partsCombine(stored: existing.stored.response, new: head) else { return plan }
        guard existing.stored.response.status.code == 206, let held = rules.storablePart(of: existing.stored.response),
            held.range.lowerBound <= part.range.upperBound, part.range.lowerBound <= held.range.upperBound
        else {
            // A complete response with this validator, or a part apart from this one (then the
            // newer replaces it: one range per entry).
            if existing.stored.response.status.code == 200 { plan.storing = nil }
            return plan
        }
        do {
            if held.range.lowerBound < part.range.lowerBound {
                plan.before = try store.slice(
                    of: existing, range: 0..<(part.range.lowerBound - held.range.lowerBound))
            }
            if held.range.upperBound > part.range.upperBound {
                plan.after = try store.slice(
                    of: existing,
                    range: (part.range.upperBound - held.range.lowerBound)..<(held.range.upperBound
                        - held.range.lowerBound))
            }
        } catch {
            plan.before = nil
            plan.after = nil
            storeProblem("stored part of \(key) unusable, storing the new part alone: \(error)")
            return plan
        }
        let union = ContentRange(
            range: min(
                held.range.lowerBound, part.range.lowerBound)..<max(held.range.upperBound, part.range.upperBound),
            completeLength: part.completeLength)
        plan.storing?.stored.response = rules.headForPart(storing.stored.response, part: union)
        return plan
    }

    /// A 200 cut short: the bytes that arrived are kept as a part (`0..<received` of the
    /// announced length), so that a later request completes it instead of fetching it all again.
    func keepCutOff(_ writer: BodyWriter?, plan: StoringPlan, received: Int, url: URL?) {
        guard let writer, let head = plan.storing?.stored.response, head.status.code == 200, plan.before == nil,
            let length = plan.expectedLength, received > 0, received < length
        else {
            writer?.cancel()
            return
        }
        let part = ContentRange(range: 0..<received, completeLength: length)
        do {
            try writer.commit(withHead: rules.headForPart(head, part: part))
            logger.debug(
                "\(url?.absoluteString ?? "?"): kept the \(received) of \(length) bytes that arrived as a part")
        } catch {
            notStored(error, "could not keep the part of \(url?.absoluteString ?? "?") that arrived: \(error)")
        }
    }

    /// A full GET for a stored prefix with a strong `ETag`: the origin is asked for the rest
    /// (`Range: bytes=N-`, `If-Range: <ETag>`), and the client gets the prefix and the rest
    /// as one 200, which is stored whole. When the origin sends the whole instead (the part is
    /// outdated), that is the answer; anything else, and the request is fetched whole.
    func completeAndRespond(
        _ request: HTTPRequest, entry: CacheEntry, part: ContentRange, key: CacheKey, url: URL,
        policy: CachePolicy, interim: InterimResponseHandler?
    ) async throws -> CacheResponse {
        let prefix: StoredBodySlice
        do {
            prefix = try store.slice(of: entry, range: 0..<entry.bodySize)
        } catch {
            storeProblem("stored part of \(key) unusable, fetching it whole: \(error)")
            return try await fetchAndRespond(
                request, key: key, url: url, forward: .miss, policy: policy, interim: interim)
        }
        var outgoing = request
        outgoing.headerFields[.range] = "bytes=\(part.range.upperBound)-"
        outgoing.headerFields[.ifRange] = entry.stored.response.headerFields.value(.eTag)
        let removalMark = store.removalMark
        let requestTime = clock()
        let origin: OriginStream
        do {
            origin = try await contactOrigin(request.url) {
                try await self.origin.stream(outgoing, body: nil, interim: interim)
            }
        } catch let error as OriginError where error.code == .unreachable {
            throw CacheError(
                .offlineMiss, "\(url.absoluteString) is stored only in part and the origin is unreachable", cause: error
            )
        } catch let error as OriginError {
            throw CacheError(.originFailed, "fetching the rest of \(url.absoluteString) failed", cause: error)
        }
        let responseTime = clock()
        var head = origin.head
        if !head.headerFields.contains(.date) { head.headerFields[.date] = HTTPDate.format(responseTime) }
        let body = BodyBroadcast()
        var clientHead: HTTPResponse
        var plan: StoringPlan
        if head.status.code == 206, let rest = rules.storablePart(of: head), let length = part.completeLength,
            rest.range == part.range.upperBound..<length, rest.completeLength == length,
            rules.partsCombine(stored: entry.stored.response, new: head)
        {
            clientHead = rules.headForPart(head, part: ContentRange(range: 0..<length, completeLength: length))
            plan = StoringPlan(
                storing: entryToStore(
                    request, head: clientHead, requestTime: requestTime, responseTime: responseTime,
                    removalMark: removalMark, policy: policy),
                before: prefix, expectedLength: rest.range.count)
            plan.readersGetBefore = true
        } else if head.status.code == 200 {
            clientHead = head
            plan = StoringPlan(
                storing: entryToStore(
                    request, head: head, requestTime: requestTime, responseTime: responseTime,
                    removalMark: removalMark, policy: policy),
                expectedLength: head.headerFields.value(.contentLength).flatMap { Int($0) })
        } else {
            logger.debug(
                "\(url.absoluteString): the origin answered \(head.status.code) for the rest of a stored part; fetching it whole"
            )
            return try await fetchAndRespond(
                request, key: key, url: url, forward: .partial, policy: policy, interim: interim)
        }
        let stored = plan
        CallersLoop.task { [self] in
            await pumpBody(origin.body, into: body, plan: stored, url: url, pacing: origin.pacing, release: {})
        }
        let status = CacheStatus(
            cache: cacheName, forward: .partial, forwardStatus: head.status.code,
            stored: plan.storing != nil)
        clientHead.headerFields = MessageFields.removingHopByHop(clientHead.headerFields)
        clientHead.headerFields.appendCacheStatus(status)
        return CacheResponse(head: clientHead, content: .arriving(body), cacheStatus: status, url: url)
    }

    /// A range of a body still arriving: when a full GET of the same URL is under way and its
    /// response may serve this request (``mayShare``), a single range that starts at most
    /// ``arrivingRangeReach`` past what has arrived is answered from it, as a 206 that follows the
    /// download; `nil` otherwise (the range gets its own request).
    nonisolated(nonsending) func rangeOfArrivingBody(_ request: HTTPRequest, key: CacheKey, url: URL) async
        -> CacheResponse?
    {
        guard request.method == .get, !request.headerFields.contains(.ifRange),
            let value = request.headerFields.value(.range),
            request.headerFields[values: .range].count == 1, let ranges = ByteRangeRequest(value)
        else { return nil }
        var whole = request
        whole.headerFields[.range] = nil
        let wholeKey = FetchKey(whole, url: key.url)
        guard let running = misses.running(for: wholeKey), let fetch = try? await running.value,
            fetch.head.status.code == 200, let storing = fetch.storing, mayShare(fetch, with: request),
            let length = fetch.head.headerFields.value(.contentLength).flatMap({ Int($0) }),
            case .satisfiable(let pieces) = ranges.resolve(length: length), pieces.count == 1,
            pieces[0].lowerBound <= fetch.body.receivedCount + Self.arrivingRangeReach
        else { return nil }
        var status = CacheStatus(
            cache: cacheName, forward: .miss, forwardStatus: 200, stored: true, collapsed: true)
        status.ttl = rules.freshnessLeft(of: storing.stored, at: fetch.responseTime)
        var head = storing.stored.response
        head.headerFields = MessageFields.removingHopByHop(head.headerFields)
        head = rules.partialHead(head, ranges: pieces, length: length, boundary: "", bodyLength: pieces[0].count)
        head.headerFields.appendCacheStatus(status)
        return CacheResponse(head: head, content: .arriving(fetch.body.slice(pieces[0])), cacheStatus: status, url: url)
    }

    /// How far past the bytes that have arrived a range of a body still arriving may start and
    /// still wait for them (1 MiB: a few seconds of video); one further gets its own request.
    static let arrivingRangeReach = 1 << 20

    /// Whether the request carries preconditions (then it is not completed from a part).
    private func hasConditionals(_ request: HTTPRequest) -> Bool {
        [HTTPField.Name.ifMatch, .ifNoneMatch, .ifModifiedSince, .ifUnmodifiedSince, .ifRange].contains {
            request.headerFields.contains($0)
        }
    }
}
