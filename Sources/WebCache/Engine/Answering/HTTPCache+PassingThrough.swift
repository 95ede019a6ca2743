import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Requests that go to the origin without a stored answer: passed through uncached, and unsafe
/// methods with their invalidations (RFC 9111 §4.4).
extension HTTPCache {
    /// The response to a request that passes through uncached.
    func passThrough(
        _ request: HTTPRequest, body: Data?, url: URL, detail: String, interim: InterimResponseHandler? = nil
    ) async throws -> CacheResponse {
        let (response, _, _) = try await exchangeReportingErrors(request, body: body, url: url, interim: interim)
        let status = CacheStatus(
            cache: cacheName, forward: .bypass, forwardStatus: response.head.status.code, detail: detail)
        return originResponse(response, request: request, url: url, status: status)
    }

    /// An unsafe method: forwarded with its body, never answered from cache, and on success it
    /// invalidates the URIs RFC 9111 §4.4 names.
    func forwardUnsafe(_ request: HTTPRequest, body: Data?, url: URL, interim: InterimResponseHandler? = nil)
        async throws -> CacheResponse
    {
        let (response, requestTime, responseTime) = try await exchangeReportingErrors(
            request, body: body, url: url, interim: interim)
        let invalidations = rules.invalidations(for: request, response: response.head)
        // An entry a response just before is storing is removed too: its row goes in first.
        if !invalidations.isEmpty { await store.entriesOnTheirWayWritten() }
        for target in invalidations {
            do {
                try store.remove(url: target)
            } catch {
                storeProblem("could not invalidate \(target.absoluteString): \(error)")
            }
        }
        var status = CacheStatus(
            cache: cacheName, forward: .method, forwardStatus: response.head.status.code)
        if request.method == .post {
            status.stored = storePostResponse(
                request, response: response, requestTime: requestTime, responseTime: responseTime)
        }
        return originResponse(response, request: request, url: url, status: status)
    }

    /// RFC 9110 §9.3.3: a POST response with explicit freshness and a `Content-Location` equal
    /// to its target may answer later GET and HEAD requests for that URI; it is stored (after
    /// the invalidation the POST caused) as the GET representation.
    private func storePostResponse(
        _ request: HTTPRequest, response: OriginResponse, requestTime: Date, responseTime: Date
    ) -> Bool {
        guard
            var entry = entryToStore(
                request, head: response.head, requestTime: requestTime, responseTime: responseTime,
                removalMark: nil, policy: policy)
        else { return false }
        var asGet = request
        asGet.method = .get
        asGet.headerFields[.contentType] = nil
        asGet.headerFields[.contentLength] = nil
        entry.stored.request = asGet
        do {
            return try store.store(entry, body: response.body) != nil
        } catch {
            storeProblem("could not store the POST response for \(request.url?.absoluteString ?? "?"): \(error)")
            return false
        }
    }

    private func exchangeReportingErrors(
        _ request: HTTPRequest, body: Data?, url: URL, interim: InterimResponseHandler? = nil
    ) async throws -> (OriginResponse, Date, Date) {
        do {
            return try await exchange(request, body: body, interim: interim)
        } catch let error as OriginError where error.code == .unreachable {
            throw CacheError(
                .offlineMiss, "\(url.absoluteString) cannot be answered: the origin is unreachable", cause: error)
        } catch {
            throw CacheError(.originFailed, "\(request.method.rawValue) \(url.absoluteString) failed", cause: error)
        }
    }

    /// A response from the origin as it goes to the client.
    func originResponse(_ response: OriginResponse, request: HTTPRequest, url: URL, status: CacheStatus)
        -> CacheResponse
    {
        var head = response.head
        head.headerFields = MessageFields.removingHopByHop(head.headerFields)
        head.headerFields.appendCacheStatus(status)
        let body = request.method == .head ? Data() : response.body
        return CacheResponse(head: head, body: body, cacheStatus: status, url: url)
    }
}
