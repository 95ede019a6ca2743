import HTTPCaching
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A fresh answer from the store that the same request would get again, unchanged — same head,
/// same `Age`, same `Cache-Status` — until ``validUntil``, unless the store or the cache's
/// settings change first.
///
/// A server that sees the same request again (same method, target and header fields) may send
/// what it sent before, once ``HTTPCache/confirmReplay(_:)`` confirms the answer still stands; the
/// reuse decision is made only by the engine, and the replay is counted and recorded like the
/// first answer.
///
/// A class, immutable: the terms go from the engine through the proxy's answer cache and back,
/// and a copy of the entry they name costs a retain for each of its many fields, where a copy
/// of the terms costs one.
package final class ReplayTerms: Sendable {
    /// The entry that answered (its body file, when the answer named one, is opened again).
    package let entry: CacheEntry
    /// The body bytes a replay serves from the cache, for the counters.
    let bytesFromCache: Int
    /// The store's ``WebCacheStore/CacheStore/revision`` the entry was current for.
    let storeRevision: UInt64
    /// The settings' revision the decision was made under.
    let settingsRevision: UInt64
    /// When the decision was made; a clock that goes back before it ends the replays.
    let decidedAt: Date
    /// When the same decision would first come out differently (the age, or the time left of an
    /// app-set expiry, moves on by a second).
    let validUntil: Date
    /// Whether the cache's policy read the request's `User-Agent` to decide (an allow-list by
    /// user agent): then requests that differ only there may be answered differently.
    package let readsUserAgent: Bool

    init(
        entry: CacheEntry, bytesFromCache: Int, storeRevision: UInt64, settingsRevision: UInt64, decidedAt: Date,
        validUntil: Date, readsUserAgent: Bool
    ) {
        self.entry = entry
        self.bytesFromCache = bytesFromCache
        self.storeRevision = storeRevision
        self.settingsRevision = settingsRevision
        self.decidedAt = decidedAt
        self.validUntil = validUntil
        self.readsUserAgent = readsUserAgent
    }

    /// The stored response's `Vary`: the request fields besides its target that chose it.
    package var vary: VarySpecifier { VarySpecifier(entry.stored.response.headerFields) }

    /// What makes two answers under these terms the same answer to requests that ask nothing
    /// more of it (no `Range`, no preconditions): the same entry, store and settings, and the
    /// same second of `Age`.
    package var answerIdentity: AnswerIdentity {
        AnswerIdentity(
            entry: entry.id, storeRevision: storeRevision, settingsRevision: settingsRevision,
            validUntil: validUntil.timeIntervalSince1970)
    }

    /// See ``answerIdentity``.
    package struct AnswerIdentity: Hashable, Sendable {
        let entry: Int64
        let storeRevision: UInt64
        let settingsRevision: UInt64
        let validUntil: Double

        /// The stored entry the answer comes from, the same for each second's answer of it.
        package var entryID: Int64 { entry }
    }
}
