import Crypto
import Foundation
import NIOCore
import NIOPosix
import SwiftASN1
import Testing
import WebCacheTLS
import WebCacheTestSupport
import X509

@Suite("The local certificate authority and minted certificates")
struct CertificateAuthorityTests {
    @Test(
        "made on first use in a 0700 folder with a 0600 key; loaded again unchanged; refused once others can read the key"
    )
    func filesAndPermissions() throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url.appendingPathComponent("ca")
        let made = try CertificateAuthority.load(orCreateIn: folder)
        let attributes = { (path: String) in
            try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        }
        #expect(try attributes(folder.path) == 0o700)
        #expect(try attributes(folder.appendingPathComponent("ca-key.pem").path) == 0o600)
        #expect(made.certificateFile == folder.appendingPathComponent("ca.pem"))

        let again = try CertificateAuthority.load(orCreateIn: folder)
        #expect(again.certificatePEM == made.certificatePEM)
        #expect(again.publicKeySHA256 == made.publicKeySHA256)

        // The certificate: a CA for five years, path length 0, keyCertSign + cRLSign, an SKI.
        let certificate = made.certificate
        #expect(try certificate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
        let usage = try #require(try certificate.extensions.keyUsage)
        #expect(usage.keyCertSign && usage.cRLSign && !usage.digitalSignature)
        #expect(try certificate.extensions.subjectKeyIdentifier != nil)
        let years = certificate.notValidAfter.timeIntervalSince(certificate.notValidBefore) / (365 * 86_400)
        #expect(years > 4.9 && years < 5.1)

        chmod(folder.appendingPathComponent("ca-key.pem").path, 0o644)
        #expect(throws: CertificateAuthorityError.self) { try CertificateAuthority.load(orCreateIn: folder) }
        chmod(folder.appendingPathComponent("ca-key.pem").path, 0o600)
        chmod(folder.path, 0o755)
        let refusal = #expect(throws: CertificateAuthorityError.self) {
            try CertificateAuthority.load(orCreateIn: folder)
        }
        #expect(refusal?.description.contains("open to other users") == true)
    }

    @Test("two processes making the authority at once end up with one")
    func concurrentCreation() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let folder = temporary.url.appendingPathComponent("ca")
        let made = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<6 { group.addTask { try CertificateAuthority.load(orCreateIn: folder).certificatePEM } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(made.count == 1)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary.url.path) == ["ca"],
            "no staging folder left behind")
    }

    @Test(
        "a leaf per host: the host as its name (an address as an IP name), serverAuth, about 180 days, issued by the authority"
    )
    func minting() throws {
        let authority = try CertificateAuthority.make()
        let certificates = try InterceptionCertificates(authority: authority)
        let named = try certificates.issuedCertificate(for: "Example.COM")
        #expect(named.issuer == authority.certificate.subject)
        #expect(try named.extensions.subjectAlternativeNames == SubjectAlternativeNames([.dnsName("example.com")]))
        #expect(try named.extensions.extendedKeyUsage?.contains(.serverAuth) == true)
        #expect(try named.extensions.basicConstraints == .notCertificateAuthority)
        let days = named.notValidAfter.timeIntervalSince(Date()) / 86_400
        #expect(days > 179 && days < 181)
        #expect(
            try named.extensions.authorityKeyIdentifier?.keyIdentifier
                == authority.certificate.extensions.subjectKeyIdentifier?.keyIdentifier)
        // Signed by the authority's key.
        #expect(authority.certificate.publicKey.isValidSignature(named.signature, for: named))

        let address = try certificates.issuedCertificate(for: "127.0.0.1")
        #expect(
            try address.extensions.subjectAlternativeNames
                == SubjectAlternativeNames([.ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]))
        let v6 = try certificates.issuedCertificate(for: "[::1]")
        #expect(
            try v6.extensions.subjectAlternativeNames?.first
                == .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))))
    }

    @Test("clients asking for one new host at once share one mint; the table keeps the most recent hosts")
    func coalescedAndBounded() async throws {
        let certificates = try InterceptionCertificates(authority: try CertificateAuthority.make(), capacity: 20)
        let group = MultiThreadedEventLoopGroup.singleton
        let contexts = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { tasks in
            for _ in 0..<16 {
                tasks.addTask {
                    ObjectIdentifier(
                        try await certificates.serverContext(for: "shared.example", on: group.next()).get())
                }
            }
            return try await tasks.reduce(into: Set<ObjectIdentifier>()) { $0.insert($1) }
        }
        #expect(contexts.count == 1)
        #expect(certificates.minted == 1)
        for index in 0..<50 {
            _ = try await certificates.serverContext(for: "host\(index).example", on: group.next()).get()
        }
        #expect(certificates.count <= 20)
    }

    @Test(
        "a certificate names a host by its DNS names only: exact, or a wildcard for one label; an IP address name never"
    )
    func namesByDNS() throws {
        let authority = try CertificateAuthority.make()
        let key = P256.Signing.PrivateKey()
        func der(_ names: [String]) throws -> [UInt8] {
            var serializer = DER.Serializer()
            try serializer.serialize(try authority.issueServerCertificate(for: names, publicKey: key.publicKey))
            return serializer.serializedBytes
        }
        let wildcard = try der(["*.example.com", "127.0.0.1"])
        #expect(CertificateNames.certificate(wildcard, names: "www.example.com"))
        #expect(CertificateNames.certificate(wildcard, names: "WWW.Example.com."))
        #expect(!CertificateNames.certificate(wildcard, names: "example.com"))
        #expect(!CertificateNames.certificate(wildcard, names: "a.b.example.com"))
        #expect(!CertificateNames.certificate(wildcard, names: "127.0.0.1"))
        #expect(CertificateNames.certificate(try der(["localhost"]), names: "localhost"))
    }
}
