import Crypto
import NIOSSL
import X509

extension CertificateAuthority {
    /// A TLS server context for `hosts` with a new key and a certificate from this authority:
    /// for a test or demo origin whose clients trust this authority.
    public func makeServerContext(for hosts: [String]) throws -> NIOSSLContext {
        let key = P256.Signing.PrivateKey()
        let certificate = try issueServerCertificate(for: hosts, publicKey: key.publicKey)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [
                .certificate(
                    try NIOSSLCertificate(bytes: Array(certificate.serializeAsPEM().pemString.utf8), format: .pem))
            ],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)))
        return try NIOSSLContext(configuration: configuration)
    }
}
