import NIOSSL
import WebCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Which certificates an HTTPS origin may present: always verified, against the system's roots
/// and any extra certificate authorities given here (curl's `--cacert`: a company's or a test
/// origin's own CA).
///
/// In a configuration file, `cacert` names one PEM file or a list of them (read by
/// `ConfigurationFile.certificateAuthorityFiles` in WebCacheYAML):
///
/// ```yaml
/// cacert: /etc/ssl/company-root.pem
/// ```
public struct OriginTrust: Sendable {
    /// The extra authorities, parsed.
    public let additionalAuthorities: [NIOSSLCertificate]
    /// The files they came from.
    public let files: [String]

    /// The system's roots only.
    public init() {
        self.additionalAuthorities = []
        self.files = []
    }

    /// The system's roots and the certificates in `files` (PEM, several per file allowed).
    /// Fails with a message naming the file that cannot be read or holds no certificate.
    public init(certificateFiles files: [String]) throws {
        var authorities: [NIOSSLCertificate] = []
        for file in files {
            guard FileManager.default.isReadableFile(atPath: file) else {
                throw PolicyError(
                    .unreadableFile, "cannot read the certificate authority file \(file): no such file, or not readable"
                )
            }
            do {
                let certificates = try NIOSSLCertificate.fromPEMFile(file)
                guard !certificates.isEmpty else {
                    throw PolicyError(.invalidConfiguration, "\(file) holds no PEM certificate")
                }
                authorities += certificates
            } catch let error as PolicyError {
                throw error
            } catch {
                throw PolicyError(.invalidConfiguration, "\(file) is not a PEM certificate file (\(error))")
            }
        }
        self.additionalAuthorities = authorities
        self.files = files
    }

    /// A client TLS configuration that verifies certificates and names against these roots.
    public func clientConfiguration() -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .fullVerification
        if !additionalAuthorities.isEmpty {
            configuration.additionalTrustRoots = [.certificates(additionalAuthorities)]
        }
        return configuration
    }
}
