import NIOSSL
import WebCache

/// Errors that mean a TLS peer could not be trusted (its certificate, its name, the handshake),
/// as opposed to a network that failed.
package enum TLSFailure {
    /// Why the peer's certificate cannot be trusted (it does not verify, names another host, or
    /// is missing), in words; `nil` for any other error, other TLS failures included.
    package static func certificateProblem(_ error: any Error) -> String? {
        guard let reason = reason(error) else { return nil }
        if case .handshakeFailed(let details) = error as? NIOSSLError,
            !"\(details)".contains("CERTIFICATE_VERIFY_FAILED")
        {
            return nil
        }
        return reason
    }

    /// Why TLS with the peer failed, in words; `nil` when `error` is not a TLS failure.
    package static func reason(_ error: any Error) -> String? {
        switch error {
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return "the certificate is not for this host name (\(error))"
        case let error as NIOSSLExtraError:
            return "\(error)"
        case let error as NIOSSLError:
            switch error {
            case .handshakeFailed(let details):
                let text = "\(details)"
                if text.contains("CERTIFICATE_VERIFY_FAILED") {
                    return "the certificate does not verify against the trusted authorities (\(text))"
                }
                return "the TLS handshake failed (\(text))"
            case .unableToValidateCertificate:
                return "the certificate could not be validated"
            case .noCertificateToValidate:
                return "no certificate was presented"
            default:
                return nil
            }
        default:
            return nil
        }
    }
}
