import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// Serves a stored entry, or fetches it again when its body turns out unusable.
    func serveStoredOrRefetch(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, now: Date, detail: String?, policy: CachePolicy,
        status given: CacheStatus? = nil, decision known: ReuseDecision? = nil
    ) async throws -> CacheResponse {
        if let response = serveStored(
            entry, request: request, url: url, now: now, detail: detail, policy: policy, status: given, decision: known)
        {
            return response
        }
        return try await fetchAndRespond(request, key: entry.key, url: url, forward: .miss, policy: policy)
    }

    /// Serves a stored entry: `Age`, `Cache-Status`, a 304 when the client's own validators
    /// match, a 206 (or 416) for a `Range` the stored response can answer, no body for HEAD.
    /// `nil` when the body turns out unusable (corrupt, vanished): the caller treats it as a miss.
    ///
    /// With `bodyFilesFrom`, a body (or single range) of at least that many bytes in a file is
    /// not read (the store checks the file once, a chunk at a time): the response's content names the entry and the bytes
    /// instead (``CacheResponse/Content/storedFile(_:range:)``). With `bodyStreamsFrom`, so is a
    /// whole body of at least that many bytes in any file, for a caller that reads it in chunks
    /// (``StoredBodyChunks``, which checks it).
    func serveStored(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, now: Date, detail: String?, policy: CachePolicy,
        status given: CacheStatus? = nil, decision known: ReuseDecision? = nil, bodyFilesFrom minimumSize: Int? = nil,
        bodyStreamsFrom streamedSize: Int? = nil
    ) -> CacheResponse? {
        let notModified = rules.clientPreconditionsMatch(request, stored: entry.stored)
        // A stored part (a 206) holds `part.range` of the whole: its body file starts there.
        let part = entry.stored.response.status.code == 206 ? rules.storablePart(of: entry.stored.response) : nil
        let length = part?.completeLength ?? entry.bodySize
        let offset = part?.range.lowerBound ?? 0
        let inFile = { (range: Range<Int>) in (range.lowerBound - offset)..<(range.upperBound - offset) }
        // RFC 9110 §13.2.2: preconditions first; a 304 ignores Range.
        let ranges: RangeAnswer
        if notModified {
            ranges = .whole
        } else if let part {
            guard let pieces = rules.rangesWithin(part, for: request, stored: entry.stored) else { return nil }
            ranges = .partial(pieces)
        } else {
            ranges =
                !request.headerFields.contains(.range)
                ? .whole : rules.rangeAnswer(to: request, stored: entry.stored, length: length)
        }
        let sentRange: Range<Int>
        switch ranges {
        case .partial(let pieces) where pieces.count == 1: sentRange = inFile(pieces[0])
        case .whole: sentRange = 0..<entry.bodySize
        case .partial, .unsatisfiable: sentRange = 0..<0
        }
        let sendsFile: Bool
        if request.method == .head || notModified || sentRange.isEmpty {
            sendsFile = false
        } else if let streamedSize, part == nil, sentRange == 0..<entry.bodySize, sentRange.count >= streamedSize,
            entry.body.isUnreadFile
        {
            sendsFile = true  // checked as it is opened (StoredBodyChunks)
        } else if let minimumSize, sentRange.count >= minimumSize {
            sendsFile = store.verifyBodyFile(entry)  // checked here, once per process
        } else {
            sendsFile = false
        }
        var body = Data()
        var head: HTTPResponse
        // The caller usually has the decision already; only age and staleness are read here.
        let decision = known ?? decide(entry, request: request, mode: .default, now: now)
        do {
            if notModified {
                head = rules.notModifiedResponse(for: entry.stored)
                head.headerFields[.age] = String(decision.age)
            } else {
                // Worked out once per entry; each answer sets its age.
                let serving = entryFacts.servingHead(of: entry, rules: rules)
                head = serving.response
                head.headerFields[serving.agePosition] = HTTPField(name: .age, value: String(decision.age))
                switch ranges {
                case .whole where request.method == .head:
                    // The fields a GET would get (RFC 9110 §9.3.2), its length among them when the
                    // origin sent none (a chunked response).
                    if !head.headerFields.contains(.contentLength) {
                        head.headerFields[.contentLength] = String(entry.bodySize)
                    }
                case .whole:
                    if !sendsFile { body = try store.readBody(entry) }
                case .unsatisfiable:
                    head = rules.unsatisfiableRangeHead(head, length: length)
                case .partial(let pieces) where pieces.count == 1:
                    if !sendsFile { body = try store.readBody(entry, range: inFile(pieces[0])) }
                    head = rules.partialHead(
                        head, ranges: pieces, length: length, boundary: "", bodyLength: pieces[0].count)
                case .partial(let pieces):
                    let boundary = "webcache-\(String(UInt64(bitPattern: entry.id), radix: 16))-\(entry.bodySize)"
                    let parts = try pieces.map { ($0, try store.readBody(entry, range: inFile($0))) }
                    body = rules.multipartBody(
                        parts: parts, contentType: entry.stored.response.headerFields.value(.contentType),
                        length: length,
                        boundary: boundary)
                    head = rules.partialHead(
                        head, ranges: pieces, length: length, boundary: boundary, bodyLength: body.count)
                }
            }
        } catch {
            storeProblem("stored body of \(entry.key) unusable, fetching again: \(error)")
            return nil
        }
        var status = given ?? CacheStatus(cache: cacheName, hit: true)
        status.ttl = -decision.staleness
        status.detail = status.detail ?? detail
        head.headerFields.appendCacheStatus(status)
        if status.hit {
            let bytes = sendsFile ? sentRange.count : body.count
            count {
                $0.hits += 1
                $0.bytesFromCache += bytes
            }
        }
        store.recordAccess(entry, at: now, appExpiry: slidingExpiry(of: entry, url: url, policy: policy, now: now))
        return CacheResponse(
            head: head, content: sendsFile ? .storedFile(entry, range: sentRange) : .bytes(body), cacheStatus: status,
            url: url)
    }

    /// The app-set expiry a use of `entry` at `now` moves on to, under a lifetime rule with
    /// sliding expiry; `nil` when no such rule applies.
    func slidingExpiry(of entry: CacheEntry, url: URL, policy: CachePolicy, now: Date) -> Date? {
        guard !policy.lifetimes.isEmpty,
            let rule = policy.lifetimeRule(
                for: url, contentType: entry.stored.response.headerFields.value(.contentType)),
            rule.slidingExpiry == true, let seconds = rule.ttl ?? rule.defaultTTL
        else { return nil }
        return now.addingTimeInterval(TimeInterval(WholeSeconds.clamped(seconds)))
    }

    /// The empty answer to a blocked URL (ad and tracker filtering); the network is never used.
    func blockedResponse(url: URL) -> CacheResponse {
        let status = CacheStatus(cache: cacheName, forward: .bypass, detail: "blocked")
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentLength] = "0"
        head.headerFields[.cacheControl] = "no-store"
        head.headerFields.appendCacheStatus(status)
        return CacheResponse(head: head, body: Data(), cacheStatus: status, url: url)
    }

    /// The answer to `only-if-cached` (or only-cache mode) when nothing usable is stored
    /// (RFC 9111 §5.2.1.7).
    func gatewayTimeout(url: URL) -> CacheResponse {
        let status = CacheStatus(cache: cacheName, forward: .miss, detail: "only-if-cached")
        var head = HTTPResponse(status: .gatewayTimeout)
        head.headerFields[.contentLength] = "0"
        head.headerFields.appendCacheStatus(status)
        return CacheResponse(head: head, body: Data(), cacheStatus: status, url: url)
    }
}

extension BodyLocation {
    /// In a file and not in memory: a body read from its file as it is sent costs no memory.
    fileprivate var isUnreadFile: Bool {
        if case .file = self { return true }
        return false
    }
}
