import HTTPWire
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What went wrong in an exchange, as `OriginFetching` asks.
extension SwiftNIOOrigin {
    static func connectionDropped(_ error: any Error) -> Bool {
        if case OriginExchangeHandler.Failure.closedBeforeHead = error { return true }
        return ConnectionErrors.dropped(error)
    }

    /// What went wrong, as an ``OriginError``.
    static func classify(_ error: any Error, url: URL?, receiving: Bool) -> OriginError {
        let name = url?.host ?? url?.absoluteString ?? "the origin"
        switch error {
        case let error as OriginError:
            return error
        case let error as HTTPParseError:
            return OriginError(.invalidResponse, "\(name) sent a malformed response (\(error.reason))", cause: error)
        case let error as TransferDecodingError:
            return OriginError(.invalidResponse, "\(name): \(error)", cause: error)
        case OriginExchangeHandler.Failure.tooLarge, OriginExchangeHandler.Failure.switchingProtocols:
            return OriginError(.invalidResponse, "\(name): \(error)", cause: error)
        case let failure as OriginExchangeHandler.Failure:
            return OriginError(
                .unreachable,
                receiving ? "\(name) stopped answering: \(failure)" : "no answer from \(name): \(failure)", cause: error
            )
        default:
            break
        }
        if let reason = TLSFailure.reason(error) {
            // Never "unreachable": a certificate that does not verify is not a network that is down.
            return OriginError(.invalidResponse, "\(name) failed TLS verification: \(reason)", cause: error)
        }
        if !receiving, let reason = ConnectionErrors.failure(error) {
            return OriginError(
                .unreachable, "cannot connect to \(name): \(reason)", cause: error, connectionFailed: true)
        }
        return OriginError(
            .unreachable, receiving ? "\(name) stopped answering" : "no answer from \(name)", cause: error)
    }
}
