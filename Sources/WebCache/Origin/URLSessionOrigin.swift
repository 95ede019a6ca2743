import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An origin on URLSession: for apps that want the system's networking (proxies, VPNs, Apple
/// platform policies). Redirects are refused so that the cache sees and stores each hop.
public final class URLSessionOrigin: OriginFetching, @unchecked Sendable {
    private let session: URLSession
    private let delegate = RedirectRefusal()

    /// Creates an origin on a session with `configuration`. Its URL cache is turned off and any
    /// `protocolClasses` are kept as given: never put ``WebCacheURLProtocol`` in them.
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let configuration = configuration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends the request; see ``OriginFetching/fetch(_:body:)``.
    public func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
        guard let url = request.url else { throw OriginError(.invalidRequest, "the request has no absolute URL") }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        urlRequest.httpBody = body
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: urlRequest)
        } catch let error as URLError {
            throw Self.classify(error, url: url)
        } catch {
            throw OriginError(.unreachable, "cannot reach \(url.host ?? url.absoluteString)", cause: error)
        }
        guard let http = response as? HTTPURLResponse else {
            throw OriginError(.invalidResponse, "\(url.absoluteString) did not answer with HTTP")
        }
        var fields = HTTPFields()
        fields.reserveCapacity(http.allHeaderFields.count)
        for (name, value) in http.allHeaderFields {
            if let name = (name as? String).flatMap({ HTTPField.Name($0) }), let value = value as? String {
                fields.append(HTTPField(name: name, value: value))
            }
        }
        return OriginResponse(
            head: HTTPResponse(status: .init(code: http.statusCode), headerFields: fields), body: data)
    }

    static func classify(_ error: URLError, url: URL) -> OriginError {
        switch error.code {
        case .badURL, .unsupportedURL:
            return OriginError(.invalidRequest, "cannot send a request to \(url.absoluteString)", cause: error)
        case .badServerResponse, .cannotDecodeRawData, .cannotParseResponse:
            return OriginError(.invalidResponse, "\(url.absoluteString) sent a broken response", cause: error)
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet, .internationalRoamingOff,
            .dataNotAllowed, .callIsActive:
            return OriginError(
                .unreachable, "cannot connect to \(url.host ?? url.absoluteString)", cause: error,
                connectionFailed: true)
        default:
            return OriginError(.unreachable, "cannot reach \(url.host ?? url.absoluteString)", cause: error)
        }
    }
}

/// Hands 3xx responses to the caller instead of following them.
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
