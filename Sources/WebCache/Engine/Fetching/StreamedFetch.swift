import HTTPCaching
import HTTPTypes
import WebCacheStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A miss in flight: the head, and the body as it arrives, shared by every request that joined.
struct StreamedFetch: Sendable {
    var head: HTTPResponse
    var body: BodyBroadcast
    var responseTime: Date
    /// The entry being stored, when the response may be stored.
    var storing: NewEntry?
}

/// What makes concurrent misses one fetch: the method, the URL, and the request fields that most
/// often select variants, so that requests that would get different variants do not share one
/// (a value, not a string built for each miss).
struct FetchKey: Hashable, Sendable {
    var method: HTTPRequest.Method
    var url: String
    var accept: String?
    var acceptEncoding: String?
    var acceptLanguage: String?
    var authorization: String?
    var cookie: String?
    var range: String?

    init(_ request: HTTPRequest, url: String) {
        let fields = request.headerFields
        method = request.method
        self.url = url
        accept = fields.value(.accept)
        acceptEncoding = fields.value(.acceptEncoding)
        acceptLanguage = fields.value(.acceptLanguage)
        authorization = fields.value(.authorization)
        cookie = fields.value(.cookie)
        range = fields.value(.range)
    }
}

/// What a validation exchange brought (RFC 9111 §4.3.3), shared by every request validating the
/// same entry at once.
enum ValidationResult: Sendable {
    /// A 304 for the stored response: the entry, refreshed with its fields.
    case refreshed(CacheEntry)
    /// A 304 for another validator: the full response is fetched (RFC 9111 §4.3.4).
    case otherValidator
    /// An answer the stored response is served instead of (an error, where stale-if-error or the
    /// offline policy allow): its body is not read.
    case servedStaleInstead
    /// A new response: its body streams to the requests and, when it may be, to the store.
    case replaced(StreamedFetch)
}
