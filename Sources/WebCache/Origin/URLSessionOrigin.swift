import Foundation
import HTTPTypes

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An origin on URLSession: for apps that want the system's networking (proxies, VPNs, Apple
/// platform policies). Redirects are refused so that the cache sees and stores each hop.
///
/// Bodies stream: the response is handed over once its head is in, and its body follows as
/// URLSession delivers it, so a large download reaches its reader (and the store) before it has
/// arrived whole and is never held whole in memory. The body's pace is followed
/// (``OriginStream/pacing``): while the one reader of a body the cache does not keep is behind,
/// the data task is suspended, and a body given up cancels it. (On Linux, where
/// swift-corelibs-foundation can neither pause a task nor cancel one mid-transfer safely, the
/// engine spills what a slow reader has not taken, and a body given up is read to its end and
/// dropped.)
public final class URLSessionOrigin: OriginFetching, @unchecked Sendable {
    private let session: URLSession
    private let transfers = URLSessionTransfers()

    /// Creates an origin on a session with `configuration`. Its URL cache is turned off and any
    /// `protocolClasses` are kept as given: never put ``WebCacheURLProtocol`` in them.
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let configuration = configuration
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration, delegate: transfers, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Sends the request and collects the body; see ``OriginFetching/fetch(_:body:)``.
    public func fetch(_ request: HTTPRequest, body: Data?) async throws -> OriginResponse {
        try await stream(request, body: body).collected()
    }

    /// Sends the request and returns once the response head has arrived, the body following as
    /// URLSession delivers it; see ``OriginFetching/stream(_:body:)``.
    public func stream(_ request: HTTPRequest, body: Data?) async throws -> OriginStream {
        guard let url = request.url else { throw OriginError(.invalidRequest, "the request has no absolute URL") }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headerFields { urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName) }
        urlRequest.httpBody = body
        let task = session.dataTask(with: urlRequest)
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let transfer = URLSessionTransfer(task: task, url: url, body: continuation)
        continuation.onTermination = { [weak transfer] termination in
            // A reader that stops before the end: nothing reads the rest.
            if case .cancelled = termination { transfer?.abandon() }
        }
        let response = try await withTaskCancellationHandler {
            try await transfer.head { transfers.start(transfer) }
        } onCancel: {
            transfer.abandon()
        }
        guard let http = response as? HTTPURLResponse else {
            transfer.abandon()
            throw OriginError(.invalidResponse, "\(url.absoluteString) did not answer with HTTP")
        }
        return OriginStream(head: Self.head(of: http), body: stream, pacing: transfer.pacing)
    }

    /// The response head of `http`, its fields as URLSession reports them.
    static func head(of http: HTTPURLResponse) -> HTTPResponse {
        var fields = HTTPFields()
        fields.reserveCapacity(http.allHeaderFields.count)
        for (name, value) in http.allHeaderFields {
            if let name = (name as? String).flatMap({ HTTPField.Name($0) }), let value = value as? String {
                fields.append(HTTPField(name: name, value: value))
            }
        }
        return HTTPResponse(status: .init(code: http.statusCode), headerFields: fields)
    }

    static func classify(_ error: any Error, url: URL) -> OriginError {
        guard let error = error as? URLError else {
            return OriginError(.unreachable, "cannot reach \(url.host ?? url.absoluteString)", cause: error)
        }
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
