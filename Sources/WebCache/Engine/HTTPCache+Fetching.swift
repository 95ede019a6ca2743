import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// (RFC 9110 §6.6.1).
    func exchange(_ request: HTTPRequest, body: Data?) async throws -> (OriginResponse, Date, Date) {
        let requestTime = configuration.now()
        var response = try await origin.fetch(request, body: body)
        let responseTime = configuration.now()
        if !response.head.headerFields.contains(.date) {
            response.head.headerFields[.date] = HTTPDate.format(responseTime)
        }
        count { $0.bytesFromOrigin += response.body.count }
        return (response, requestTime, responseTime)
    }

    /// A miss (or a reload): one coalesced origin fetch, stored if allowed.
    func fetchAndRespond(
        _ request: HTTPRequest, key: CacheKey, url: URL, forward: CacheStatus.Forward, policy: CachePolicy
    ) async throws -> CacheResponse {
        let coalescingKey = "fetch \(request.method.rawValue) \(key.url)\n\(Self.coalescingFields(request))"
        let (result, collapsed): (FetchResult, Bool)
        do {
            (result, collapsed) = try await fetches.value(for: coalescingKey) { [self] in
                let (response, requestTime, responseTime) = try await exchange(request, body: nil)
                let stored = request.method == .get
                    ? storeIfAllowed(request, response: response, requestTime: requestTime, responseTime: responseTime, policy: policy)
                    : nil
                return FetchResult(response: response, requestTime: requestTime, responseTime: responseTime, stored: stored)
            }
        } catch let error as OriginError where error.kind == .unreachable {
            throw CacheError(.offlineMiss, "\(url.absoluteString) is not cached and the origin is unreachable", cause: error)
        } catch let error as OriginError {
            throw CacheError(.originFailed, "fetching \(url.absoluteString) failed", cause: error)
        }
        var status = CacheStatus(
            cache: configuration.cacheName, forward: forward, forwardStatus: result.response.head.status.code,
            stored: result.stored != nil, collapsed: collapsed)
        if let stored = result.stored {
            status.ttl = -configuration.rules.reuse(stored.stored, for: request, now: result.responseTime).staleness
        }
        return originResponse(result.response, request: request, url: url, status: status)
    }

    /// The response to a request that passes through uncached.
    func passThrough(_ request: HTTPRequest, body: Data?, url: URL, detail: String) async throws -> CacheResponse {
        let (response, _, _) = try await exchangeReportingErrors(request, body: body, url: url)
        let status = CacheStatus(cache: configuration.cacheName, forward: .bypass, forwardStatus: response.head.status.code, detail: detail)
        return originResponse(response, request: request, url: url, status: status)
    }

    /// An unsafe method: forwarded with its body, never answered from cache, and on success it
    /// invalidates the URIs RFC 9111 §4.4 names.
    func forwardUnsafe(_ request: HTTPRequest, body: Data?, url: URL) async throws -> CacheResponse {
        let (response, _, _) = try await exchangeReportingErrors(request, body: body, url: url)
        for target in configuration.rules.invalidations(for: request, response: response.head) {
            do {
                try store.remove(url: target)
            } catch {
                logger.warning("could not invalidate \(target.absoluteString): \(error)")
            }
        }
        let status = CacheStatus(cache: configuration.cacheName, forward: .method, forwardStatus: response.head.status.code)
        return originResponse(response, request: request, url: url, status: status)
    }

    private func exchangeReportingErrors(_ request: HTTPRequest, body: Data?, url: URL) async throws -> (OriginResponse, Date, Date) {
        do {
            return try await exchange(request, body: body)
        } catch let error as OriginError where error.kind == .unreachable {
            throw CacheError(.offlineMiss, "\(url.absoluteString) cannot be answered: the origin is unreachable", cause: error)
        } catch {
            throw CacheError(.originFailed, "\(request.method.rawValue) \(url.absoluteString) failed", cause: error)
        }
    }

    /// A response from the origin as it goes to the client.
    func originResponse(_ response: OriginResponse, request: HTTPRequest, url: URL, status: CacheStatus) -> CacheResponse {
        var head = response.head
        head.headerFields = MessageFields.removingHopByHop(head.headerFields)
        head.headerFields.appendCacheStatus(status)
        let body = request.method == .head ? Data() : response.body
        return CacheResponse(head: head, body: body, cacheStatus: status, url: url)
    }

    /// The request fields that most often select variants, so that requests that would get
    /// different variants do not share a fetch.
    static func coalescingFields(_ request: HTTPRequest) -> String {
        let names: [HTTPField.Name] = [.accept, .acceptEncoding, .acceptLanguage, .authorization, .cookie, .range]
        return names.map { request.headerFields[$0] ?? "" }.joined(separator: "\n")
    }
}
