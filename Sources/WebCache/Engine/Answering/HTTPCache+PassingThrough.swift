import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Requests that go to the origin without a stored answer: passed through uncached, and unsafe
/// methods with their invalidations (RFC 9111 §4.4). Their responses go to the caller as they
/// arrive, as misses do (a download starts at once, a stream of events flows), past the memory
/// budget through a spill file: never held whole.
extension HTTPCache {
    /// The response to a request that passes through uncached.
    func passThrough(
        _ request: HTTPRequest, body: Data?, bodyStream: RequestBodyStream? = nil, url: URL, detail: String,
        interim: InterimResponseHandler? = nil
    ) async throws -> CacheResponse {
        try await streamThrough(request, body: body, bodyStream: bodyStream, url: url, interim: interim) { head, _, _ in
            let status = CacheStatus(
                cache: cacheName, forward: .bypass, forwardStatus: head.status.code, detail: detail)
            return (status, StoringPlan(storing: nil))
        }
    }

    /// An unsafe method: forwarded with its body, never answered from cache, and on success it
    /// invalidates the URIs RFC 9111 §4.4 names (once its head is in, before its body).
    func forwardUnsafe(
        _ request: HTTPRequest, body: Data?, bodyStream: RequestBodyStream? = nil, url: URL,
        interim: InterimResponseHandler? = nil
    ) async throws -> CacheResponse {
        try await streamThrough(request, body: body, bodyStream: bodyStream, url: url, interim: interim) {
            head, requestTime, responseTime in
            let invalidations = rules.invalidations(for: request, response: head)
            // An entry a response just before is storing is removed too: its row goes in first.
            if !invalidations.isEmpty { await store.entriesOnTheirWayWritten() }
            for target in invalidations {
                do {
                    try store.remove(url: target)
                } catch {
                    storeProblem("could not invalidate \(target.absoluteString): \(error)")
                }
            }
            var status = CacheStatus(cache: cacheName, forward: .method, forwardStatus: head.status.code)
            var plan = StoringPlan(storing: nil)
            if request.method == .post {
                plan = postResponseToStore(request, head: head, requestTime: requestTime, responseTime: responseTime)
                status.stored = plan.storing != nil
            }
            return (status, plan)
        }
    }

    /// RFC 9110 §9.3.3: a POST response with explicit freshness and a `Content-Location` equal
    /// to its target may answer later GET and HEAD requests for that URI; it is stored (after
    /// the invalidation the POST caused) as the GET representation, as its body arrives.
    private func postResponseToStore(
        _ request: HTTPRequest, head: HTTPResponse, requestTime: Date, responseTime: Date
    ) -> StoringPlan {
        guard
            var entry = entryToStore(
                request, head: head, requestTime: requestTime, responseTime: responseTime, removalMark: nil,
                policy: policy)
        else { return StoringPlan(storing: nil) }
        var asGet = request
        asGet.method = .get
        asGet.headerFields[.contentType] = nil
        asGet.headerFields[.contentLength] = nil
        entry.stored.request = asGet
        return StoringPlan(storing: entry, expectedLength: head.headerFields.value(.contentLength).flatMap { Int($0) })
    }

    /// Sends `request` to the origin and answers with its response as it arrives: `decide` gives
    /// the `Cache-Status` and what to store from the head (and does what must happen once the
    /// head is in); the body goes to the caller, and to the store as the plan says, as it comes.
    /// A `bodyStream` goes to the origin as it arrives, in place of `body`.
    private func streamThrough(
        _ request: HTTPRequest, body: Data?, bodyStream: RequestBodyStream?, url: URL, interim: InterimResponseHandler?,
        decide: (HTTPResponse, _ requestTime: Date, _ responseTime: Date) async -> (CacheStatus, StoringPlan)
    ) async throws -> CacheResponse {
        let requestTime = clock()
        let origin: OriginStream
        do {
            origin = try await contactOrigin(url) {
                if let bodyStream {
                    return try await self.origin.stream(request, streamingBody: bodyStream, interim: interim)
                }
                return try await self.origin.stream(request, body: body, interim: interim)
            }
        } catch let error as OriginError where error.code == .unreachable {
            throw CacheError(
                .offlineMiss, "\(url.absoluteString) cannot be answered: the origin is unreachable", cause: error)
        } catch {
            throw CacheError(.originFailed, "\(request.method.rawValue) \(url.absoluteString) failed", cause: error)
        }
        let responseTime = clock()
        var head = origin.head
        if !head.headerFields.contains(.date) { head.headerFields[.date] = HTTPDate.format(responseTime) }
        let (status, plan) = await decide(head, requestTime, responseTime)
        let arriving = BodyBroadcast(readOnce: plan.storing == nil)
        if origin.arrivedWhole {
            await pumpBody(origin.body, into: arriving, plan: plan, url: url, pacing: origin.pacing, release: {})
        } else {
            CallersLoop.task { [self] in
                await pumpBody(origin.body, into: arriving, plan: plan, url: url, pacing: origin.pacing, release: {})
            }
        }
        head.headerFields = MessageFields.removingHopByHop(head.headerFields)
        head.headerFields.appendCacheStatus(status)
        let content: CacheResponse.Content = request.method == .head ? .bytes(Data()) : .arriving(arriving)
        return CacheResponse(head: head, content: content, cacheStatus: status, url: url)
    }
}
