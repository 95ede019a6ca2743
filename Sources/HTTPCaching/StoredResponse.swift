import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A response as a cache keeps it: the response head, the request that produced it (for
/// `Vary`), and when that exchange happened (for `Age`, RFC 9111 §4.2.3). The body is not part
/// of the rules and lives elsewhere.
public struct StoredResponse: Sendable, Hashable {
    /// The request that was sent to obtain the response (its header fields select variants).
    public var request: HTTPRequest
    /// The response head as stored.
    public var response: HTTPResponse
    /// When the request that obtained the response was sent (`request_time`).
    public var requestTime: Date
    /// When the response was received (`response_time`).
    public var responseTime: Date

    /// Creates a stored response.
    public init(request: HTTPRequest, response: HTTPResponse, requestTime: Date, responseTime: Date) {
        self.request = request
        self.response = response
        self.requestTime = requestTime
        self.responseTime = responseTime
    }
}
