import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension HTTPCache {
    /// Whole media bodies fetched in the background at once (``completeInBackground``): half the
    /// connections an app's origin client keeps per host (`AsyncHTTPClientOrigin`'s 8), so that
    /// completions never take every connection from the requests of the page.
    static let maximumBackgroundCompletions = 4

    /// How the background task that completes a media body is named, before its key's URL.
    private static let completionPrefix = "complete "

    /// Whether a response is audio or video, which players fetch in ranges.
    func isMedia(_ head: HTTPResponse) -> Bool {
        guard let type = head.headerFields.value(.contentType)?.lowercased() else { return false }
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
    func completeInBackground(_ request: HTTPRequest, key: CacheKey, url: URL, after part: BodyBroadcast) {
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
