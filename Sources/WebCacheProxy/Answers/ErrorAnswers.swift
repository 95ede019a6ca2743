import HTTPCaching
import WebCache

/// The proxy's one mapping from a failure to the status a client sees, with the error's
/// message as a plain-text body (`Cache-Control: no-store`).
///
/// | failure | status |
/// | --- | --- |
/// | `CacheError.offlineMiss`, an unreachable origin | 504 Gateway Timeout |
/// | `CacheError.invalidRequest`, a request the origin client refused | 400 Bad Request |
/// | `OriginError.requestBodyTooLarge` (alone or as the cause of a `CacheError`), an upload that passed the largest accepted | 413 Content Too Large |
/// | the origin failed or answered with something unusable, too many redirects, anything else | 502 Bad Gateway |
/// | the cache's configuration failed | 500 Internal Server Error |
enum ErrorAnswers {
    /// The status for `error`.
    static func status(for error: any Error) -> Int {
        switch error {
        case let error as CacheError where (error.cause as? OriginError)?.code == .requestBodyTooLarge:
            413
        case let error as CacheError:
            switch error.code {
            case .offlineMiss: 504
            case .invalidRequest: 400
            default: 502
            }
        case let error as OriginError:
            switch error.code {
            case .unreachable: 504
            case .invalidRequest: 400
            case .requestBodyTooLarge: 413
            default: 502
            }
        case is PolicyError: 500
        default: 502
        }
    }

    /// The whole answer for `error`: its status, and a body that says what went wrong.
    static func response(for error: any Error) -> ProxyResponse {
        .error(status(for: error), "\(error)")
    }
}
