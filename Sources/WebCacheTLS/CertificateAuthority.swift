import Crypto
import HTTPCaching
import SwiftASN1
import X509

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A certificate authority of this install: a P-256 key and a self-signed CA certificate (about
/// five years, path length 0, keyCertSign + cRLSign, a subject key identifier) that issues the
/// leaf certificates a TLS-intercepting proxy shows its clients.
///
/// It lives in a folder of its own (``load(orCreateIn:)``): `ca.pem` (the certificate, for
/// anyone to trust) and `ca-key.pem` (the key, mode 0600 in a 0700 folder). The key never
/// leaves that file: nothing prints it, and a folder or key file that others can read is refused
/// (``CertificateAuthorityError``), since anyone holding the key can impersonate every site to
/// whoever trusts the certificate.
///
/// ```swift
/// let authority = try CertificateAuthority.load(orCreateIn: cacheDirectory.appendingPathComponent("ca"))
/// print(authority.certificatePEM)      // give this to a browser's trust store
/// ```
public final class CertificateAuthority: Sendable {
    /// The CA certificate.
    public let certificate: Certificate
    /// The CA certificate in PEM (`-----BEGIN CERTIFICATE-----`).
    public let certificatePEM: String
    /// The certificate's file, when the authority was loaded from or made in a folder.
    public let certificateFile: URL?
    let privateKey: P256.Signing.PrivateKey
    /// The CA's subject key identifier, which issued certificates name as their authority's.
    let keyIdentifier: ArraySlice<UInt8>

    /// The CA's name in the certificates it issues.
    public var name: DistinguishedName { certificate.subject }

    /// The base64 SHA-256 of the CA's public key (its SubjectPublicKeyInfo), as pins are written
    /// (`curl --pinnedpubkey sha256//…`, Chromium's `--ignore-certificate-errors-spki-list`).
    public var publicKeySHA256: String {
        Data(SHA256.hash(data: privateKey.publicKey.derRepresentation)).base64EncodedString()
    }

    init(certificate: Certificate, privateKey: P256.Signing.PrivateKey, certificateFile: URL?) throws {
        self.certificate = certificate
        self.privateKey = privateKey
        self.certificateFile = certificateFile
        self.certificatePEM = try certificate.serializeAsPEM().pemString + "\n"
        let identifier = try? certificate.extensions.subjectKeyIdentifier?.keyIdentifier
        self.keyIdentifier = identifier ?? SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier
    }

    /// A new authority in memory only (tests, a process that trusts it itself).
    /// - Parameters:
    ///   - commonName: the name browsers show for it.
    ///   - validity: how long it is valid from now.
    public static func make(commonName: String = "WebCache local CA", validity: Duration = .seconds(5 * 365 * 86_400))
        throws -> CertificateAuthority
    {
        let key = P256.Signing.PrivateKey()
        let publicKey = Certificate.PublicKey(key.publicKey)
        let name = try DistinguishedName {
            OrganizationName("WebCache")
            CommonName(commonName)
        }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: publicKey,
            notValidBefore: now.addingTimeInterval(-3600),
            notValidAfter: now.addingTimeInterval(Double(validity.components.seconds)),
            issuer: name, subject: name,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: publicKey)
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        return try CertificateAuthority(certificate: certificate, privateKey: key, certificateFile: nil)
    }

    /// Issues a leaf certificate for a TLS server: `host` as its subject alternative name (an IP
    /// address as an IP name), serverAuth, digitalSignature, valid from an hour ago (clocks
    /// differ) for `validity`, never past the CA's own end.
    public func issueServerCertificate(
        for host: String, publicKey: P256.Signing.PublicKey, validity: Duration = .seconds(180 * 86_400)
    ) throws -> Certificate {
        try issueServerCertificate(for: [host], publicKey: publicKey, validity: validity)
    }

    /// The same for several names (the first is the subject's common name).
    public func issueServerCertificate(
        for hosts: [String], publicKey: P256.Signing.PublicKey, validity: Duration = .seconds(180 * 86_400)
    ) throws -> Certificate {
        guard let host = hosts.first else {
            throw CertificateAuthorityError(.invalidRequest, "a server certificate needs at least one name")
        }
        let now = Date()
        let end = min(now.addingTimeInterval(Double(validity.components.seconds)), certificate.notValidAfter)
        let leafKey = Certificate.PublicKey(publicKey)
        let alternativeNames: [GeneralName] = hosts.map { host in
            IPAddressBytes.parse(host).map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) }
                ?? .dnsName(host)
        }
        let subject = try DistinguishedName {
            OrganizationName("WebCache")
            CommonName(String(host.prefix(64)))
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: leafKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: end,
            issuer: name, subject: subject,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(alternativeNames)
                SubjectKeyIdentifier(hash: leafKey)
                AuthorityKeyIdentifier(keyIdentifier: keyIdentifier)
            },
            issuerPrivateKey: Certificate.PrivateKey(privateKey))
    }
}

/// What went wrong with a certificate authority or its files.
public struct CertificateAuthorityError: CodedError {
    /// The codes of this error: static members of `ErrorCode` where `Domain` is this type, declared
    /// below. More may be added.
    public typealias Code = ErrorCode<CertificateAuthorityError>

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, in words.
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }
}

extension ErrorCode where Domain == CertificateAuthorityError {
    /// A file or folder could not be made, read, written or moved into place.
    public static var ioFailure: Self { Self("ioFailure") }
    /// The authority's files are incomplete, unreadable as keys and certificates, or do not
    /// belong together: move the folder aside to make a new authority.
    public static var damaged: Self { Self("damaged") }
    /// The key or its folder can be read by other users, or belongs to another user.
    public static var unsafePermissions: Self { Self("unsafePermissions") }
    /// A certificate was asked for that cannot be made (no name).
    public static var invalidRequest: Self { Self("invalidRequest") }
}

/// IP address literals as the bytes a certificate names them by.
enum IPAddressBytes {
    /// The 4 or 16 bytes of an IPv4 or IPv6 literal (brackets allowed); `nil` for a name.
    static func parse(_ text: String) -> [UInt8]? {
        var text = text
        if text.hasPrefix("[") && text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }
}
