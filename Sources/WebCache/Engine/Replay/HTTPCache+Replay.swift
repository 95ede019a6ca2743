import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// Whether the answer made under `answer` still stands for the request that got it; if so,
    /// counts and records it as a hit (as ``storedResponse(for:mode:)`` would have). `false` when
    /// the store or the settings changed, or the clock moved past ``ReplayTerms/validUntil`` (or
    /// back before the decision): then ask the engine again. Never suspends.
    package func confirmReplay(_ answer: ReplayTerms) -> Bool {
        confirm(answer, bytesFromCache: answer.bytesFromCache)
    }

    /// Whether the answer made under `answer` — one range of its entry's body, sent from the body
    /// file — still stands for a request asking for `range` (the bytes of the value of its one
    /// `Range` field, as the request carried them) and is again one range, of at least
    /// `minimumSize` bytes: then the bytes to send, counted and recorded as a hit as
    /// ``confirmReplay(_:)`` does. `nil` when the store, the settings or the second changed, or
    /// the range resolves otherwise (several ranges, too short, none, or unreadable): then ask the
    /// engine. The request's `If-Range`, if any, is the one the answer was decided for (the
    /// caller's identity of the request holds it). Never suspends.
    package func confirmRangeReplay(
        _ answer: ReplayTerms, range: UnsafeBufferPointer<UInt8>, minimumSize: Int
    ) -> Range<Int>? {
        guard let piece = Self.onePiece(of: range, length: answer.entry.bodySize), piece.count >= minimumSize,
            confirm(answer, bytesFromCache: piece.count)
        else { return nil }
        return piece
    }

    /// The one range `value` resolves to against `length` bytes, whether it names one range or
    /// several that merge into one; `nil` for none or several.
    private static func onePiece(of value: UnsafeBufferPointer<UInt8>, length: Int) -> Range<Int>? {
        if let single = ByteRangeRequest.singleRange(utf8: value, length: length) { return single }
        guard let ranges = ByteRangeRequest(String(decoding: value, as: UTF8.self)),
            case .satisfiable(let pieces) = ranges.resolve(length: length), pieces.count == 1
        else { return nil }
        return pieces[0]
    }

    /// The check and the bookkeeping of every replay: the store and the settings are those the
    /// answer was made under and its second of `Age` has not passed (nor the clock gone back
    /// before it); then it is counted as a hit serving `bytesFromCache` and its entry's access
    /// recorded.
    private func confirm(_ answer: ReplayTerms, bytesFromCache: Int) -> Bool {
        // A struct, not a tuple: a closure in a tuple that a generic function returns is wrapped
        // in a thunk, which is an allocation on every replay.
        let settings = settings.withLock { ReplaySettings(revision: $0.revision, clock: $0.now) }
        guard settings.revision == answer.settingsRevision, store.revision == answer.storeRevision else { return false }
        let now = settings.clock()
        guard now >= answer.decidedAt, now < answer.validUntil else { return false }
        count { counters in
            counters.requests += 1
            counters.hits += 1
            counters.bytesFromCache += bytesFromCache
        }
        store.recordAccess(answer.entry, at: now)
        return true
    }

    /// The terms on which `response`, a fresh answer of `entry` to a request in the default mode,
    /// may be replayed; `nil` when serving it had side effects a replay would skip (a sliding
    /// expiry moves on with every use).
    func replayTerms(
        of response: CacheResponse, entry: CacheEntry, storeRevision: UInt64, now: Date, settings: SettingsInForce
    ) -> ReplayTerms? {
        replayTerms(
            of: entry, url: response.url, bytesFromCache: response.hasBodyFile ? entry.bodySize : response.body.count,
            storeRevision: storeRevision, now: now, settings: settings)
    }

    /// The terms for a fresh answer of `entry` that serves `bytesFromCache` body bytes.
    func replayTerms(
        of entry: CacheEntry, url: URL, bytesFromCache: Int, storeRevision: UInt64, now: Date,
        settings: SettingsInForce
    ) -> ReplayTerms? {
        guard slidingExpiry(of: entry, url: url, policy: settings.policy, now: now) == nil else {
            return nil
        }
        // The age moves on by whole seconds; so does the time left of an app-set expiry, which
        // overrides the freshness of the response (`decide`).
        var validUntil = entryFacts.facts(of: entry, rules: rules).ageChanges(after: now)
        if let appExpiry = entry.appExpiry {
            let left = appExpiry.timeIntervalSince(now)
            validUntil = min(validUntil, appExpiry.addingTimeInterval(-left.rounded(.down)))
        }
        // A millisecond's margin for rounding in the date arithmetic.
        validUntil = validUntil.addingTimeInterval(-0.001)
        guard validUntil > now else { return nil }
        return ReplayTerms(
            entry: entry, bytesFromCache: bytesFromCache, storeRevision: storeRevision,
            settingsRevision: settings.revision, decidedAt: now, validUntil: validUntil,
            readsUserAgent: !(settings.policy.allow?.userAgentSuffixes.isEmpty ?? true))
    }

    /// A fresh answer of `entry` that the caller already holds (`sharing` says so), counted and
    /// recorded as a hit; `nil` when the request asks something of the answer that makes it its
    /// own (a precondition, a range other than one sent from the body file), the entry is a
    /// part, or the caller does not hold it.
    func shareableAnswer(
        _ entry: CacheEntry, request: HTTPRequest, url: URL, now: Date, storeRevision: UInt64,
        bodyFilesFrom minimumSize: Int?, settings: SettingsInForce,
        sharing: (AnswerOffer) -> Bool
    ) -> Step? {
        guard entry.stored.response.status.code != 206 else { return nil }
        let isHead = request.method == .head
        let offer: (bodyInFile: Bool, range: Range<Int>?)
        if Self.asksOfTheAnswer(request) {
            // As serveStored answers one range of a body it sends from the file.
            guard let minimumSize, Self.asksOnlyForRange(request),
                case .partial(let pieces) = rules.rangeAnswer(
                    to: request, stored: entry.stored, length: entry.bodySize),
                pieces.count == 1, pieces[0].count >= minimumSize, store.hasVerifiedBodyFile(entry)
            else { return nil }
            offer = (true, pieces[0])
        } else {
            // As serveStored decides it for a whole body.
            offer = (
                !isHead && entry.bodySize > 0 && minimumSize.map { entry.bodySize >= $0 } == true
                    && store.hasVerifiedBodyFile(entry), nil
            )
        }
        let bytes = offer.range?.count ?? (isHead ? 0 : entry.bodySize)
        guard
            let terms = replayTerms(
                of: entry, url: url, bytesFromCache: bytes, storeRevision: storeRevision, now: now,
                settings: settings)
        else { return nil }
        let answer = AnswerOffer(identity: terms.answerIdentity, bodyInFile: offer.bodyInFile, range: offer.range)
        guard sharing(answer) else { return nil }
        count {
            $0.hits += 1
            $0.bytesFromCache += bytes
        }
        store.recordAccess(entry, at: now)
        return .answeredBefore(terms, answer)
    }

    /// Whether `request` has a field that makes its answer its own: `Range` or a precondition
    /// (RFC 9110 §13.1, §14.2).
    static func asksOfTheAnswer(_ request: HTTPRequest) -> Bool {
        let fields = request.headerFields
        return fields.contains(.range) || fields.contains(.ifRange) || hasPrecondition(request)
    }

    /// Whether what `request` asks of the answer is a `Range` (with or without `If-Range`) and
    /// no precondition.
    static func asksOnlyForRange(_ request: HTTPRequest) -> Bool {
        request.headerFields.contains(.range) && !hasPrecondition(request)
    }

    /// Whether `request` has `If-None-Match`, `If-Modified-Since`, `If-Match` or
    /// `If-Unmodified-Since` (RFC 9110 §13.1).
    private static func hasPrecondition(_ request: HTTPRequest) -> Bool {
        let fields = request.headerFields
        return fields.contains(.ifNoneMatch) || fields.contains(.ifModifiedSince) || fields.contains(.ifMatch)
            || fields.contains(.ifUnmodifiedSince)
    }
}

/// What a replay is checked against, read under the settings' lock.
private struct ReplaySettings {
    var revision: UInt64
    var clock: @Sendable () -> Date
}
