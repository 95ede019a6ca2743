import Foundation
import NIOSSL
import WebCacheTLS

/// TLS for a test origin: a certificate authority made for the test and a server certificate
/// it issued, for `127.0.0.1` unless told otherwise.
public struct TestTLS: Sendable {
    /// The authority that signed the server's certificate (trust it to reach the origin).
    public let authority: CertificateAuthority
    /// The server's TLS context.
    public let context: NIOSSLContext

    /// A server certificate for `name` issued by `authority` (a new one by default).
    public init(name: String = "127.0.0.1", authority: CertificateAuthority? = nil) throws {
        try self.init(names: [name], authority: authority)
    }

    /// A server certificate for all of `names`.
    public init(names: [String], authority: CertificateAuthority? = nil) throws {
        let authority = try authority ?? CertificateAuthority.make(commonName: "WebCache test origin CA")
        self.authority = authority
        self.context = try authority.makeServerContext(for: names)
    }

    /// Writes the authority's certificate into `directory` and returns the file's path (for
    /// `--cacert` and ``WebCache/OriginTrust``).
    public func writeAuthority(into directory: URL, name: String = "origin-ca.pem") throws -> String {
        let file = directory.appendingPathComponent(name)
        try authority.certificatePEM.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }
}
