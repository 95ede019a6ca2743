import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension WebCacheURLProtocol {
    /// The protocol's one mapping from a failure to the `URLError` a URLSession task ends with,
    /// so that an app handles WebCache's failures as it handles URLSession's own. The error's
    /// text is the localized description, and the error itself is the underlying error.
    ///
    /// | failure | `URLError.Code` |
    /// | --- | --- |
    /// | `CacheError` `.offlineMiss`, an unreachable origin | `.notConnectedToInternet` |
    /// | `CacheError` `.tooManyRedirects` | `.httpTooManyRedirects` |
    /// | `CacheError` `.invalidRequest`, a request the origin client refused | `.unsupportedURL` |
    /// | an origin that answered with something unusable | `.badServerResponse` |
    /// | a `URLError` | itself |
    /// | anything else | `.cannotLoadFromNetwork` |
    public static func urlError(for error: any Error) -> URLError {
        if let error = error as? URLError { return error }
        let code: URLError.Code
        switch error {
        case let error as CacheError:
            switch error.code {
            case .offlineMiss: code = .notConnectedToInternet
            case .tooManyRedirects: code = .httpTooManyRedirects
            case .invalidRequest: code = .unsupportedURL
            default: code = (error.cause as? OriginError).map(urlErrorCode(for:)) ?? .cannotLoadFromNetwork
            }
        case let error as OriginError: code = urlErrorCode(for: error)
        default: code = .cannotLoadFromNetwork
        }
        return URLError(
            code, userInfo: [NSLocalizedDescriptionKey: "\(error)", NSUnderlyingErrorKey: error as NSError])
    }

    private static func urlErrorCode(for error: OriginError) -> URLError.Code {
        switch error.code {
        case .unreachable: .notConnectedToInternet
        case .invalidRequest: .unsupportedURL
        case .invalidResponse: .badServerResponse
        default: .cannotLoadFromNetwork
        }
    }
}
