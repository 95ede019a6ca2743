import HTTPCaching
import HTTPTypes
import Logging
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// Reports why a response is not stored after all: `problem`, a store problem, unless an
    /// entry for its URL was removed while it was on its way (an unsafe request invalidated it),
    /// which is how it should be. An index too far behind (a stuck disk) is counted as a store
    /// problem but logged only for debugging: it holds for every miss until the disk is back,
    /// and a warning each would flood the log.
    func notStored(_ error: any Error, _ problem: @autoclosure () -> Logger.Message) {
        let storeError = error as? StoreError
        if let storeError, storeError.code == .removedMeanwhile {
            logger.debug("\(storeError.message)")
        } else if storeError?.code == .indexBehind {
            storeProblem(problem(), level: .debug)
        } else {
            storeProblem(problem())
        }
    }

    /// The entry to store for a response, or `nil` when the rules or the app hook say no; `url`
    /// is the request's, when the caller has it already. `removalMark` is the store's from
    /// before the request was sent: if the URL is invalidated while the response is on its way
    /// (a POST that overtook it), the entry is not stored, since it may hold what the
    /// invalidation was to discard.
    func entryToStore(
        _ request: HTTPRequest, url knownURL: URL? = nil, head response: HTTPResponse, requestTime: Date,
        responseTime: Date, removalMark: RemovalMark?, policy: CachePolicy
    ) -> NewEntry? {
        // Parsed once: what is stored keeps the same directives unless storing took fields out
        // (then they are parsed again, in case one was a Cache-Control) or the app's hook changed it.
        let responseDirectives = rules.directives(for: response)
        let storability = rules.storability(of: response, for: request, directives: responseDirectives)
        guard storability.isStorable else {
            logger.debug("not storing \(request.url?.absoluteString ?? "?"): \(storability)")
            return nil
        }
        var head = rules.headForStorage(response, storability: storability)
        var headChanged = head.headerFields.count != response.headerFields.count
        if rules.kind.shared, head.headerFields.contains(.setCookie) {
            switch policy.sharedSetCookie {
            case .keep: break
            case .strip: head.headerFields[.setCookie] = nil
            case .doNotStore:
                logger.debug(
                    "not storing \(request.url?.absoluteString ?? "?"): it sets a cookie (sharedSetCookie: doNotStore)")
                return nil
            }
        }
        if let hook = settings.withLock({ $0.willCache }) {
            guard let changed = hook(request, head) else { return nil }
            head = changed
            headChanged = true
        }
        let directives = headChanged ? rules.directives(for: head) : responseDirectives
        let stored = StoredResponse(
            request: request, response: head, requestTime: requestTime, responseTime: responseTime)
        let freshness = rules.freshness(of: stored, directives: directives)
        var appExpiry: Date?
        if let url = knownURL ?? request.url,
            let rule = policy.lifetimeRule(for: url, contentType: head.headerFields.value(.contentType))
        {
            if let ttl = rule.ttl {
                appExpiry = responseTime.addingTimeInterval(TimeInterval(WholeSeconds.clamped(ttl)))
            } else if let defaultTTL = rule.defaultTTL, !freshness.isExplicit {
                appExpiry = responseTime.addingTimeInterval(TimeInterval(WholeSeconds.clamped(defaultTTL)))
            }
        }
        let staleAllowance = [
            policy.offlineMaxStale ?? 365 * 86_400, directives.cacheControl.staleWhileRevalidate?.seconds ?? 0,
            directives.cacheControl.staleIfError?.seconds ?? 0,
        ].max()!
        let lifetimeEnd = max(
            responseTime.addingTimeInterval(TimeInterval(freshness.lifetime)), appExpiry ?? .distantPast)
        // Responses with validators stay useful for revalidation past their staleness limit.
        let hasValidator = head.headerFields.contains(.eTag) || head.headerFields.contains(.lastModified)
        let discardAfter = hasValidator ? nil : lifetimeEnd.addingTimeInterval(TimeInterval(staleAllowance))
        var entry = NewEntry(stored: stored, appExpiry: appExpiry, discardAfter: discardAfter)
        entry.removalMark = removalMark
        return entry
    }
}
