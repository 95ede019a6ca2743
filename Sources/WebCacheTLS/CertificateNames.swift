import X509

/// Whether a certificate is for a host name by its DNS names alone (RFC 6125: a `*` covers one
/// leftmost label). Stricter than hostname checks that accept a certificate whose IP address
/// name matches the connected address, whatever name was asked for.
public enum CertificateNames {
    /// Whether the certificate in `der` lists `host` among its DNS subject alternative names.
    public static func certificate(_ der: [UInt8], names host: String) -> Bool {
        guard let certificate = try? Certificate(derEncoded: der),
            let names = try? certificate.extensions.subjectAlternativeNames
        else { return false }
        let host = InterceptionCertificates.normalized(host)
        return names.contains { name in
            guard case .dnsName(let dnsName) = name else { return false }
            let listed = InterceptionCertificates.normalized(dnsName)
            if listed == host { return true }
            guard listed.hasPrefix("*."), let dot = host.firstIndex(of: ".") else { return false }
            return host[host.index(after: dot)...] == listed.dropFirst(2) && !host[..<dot].isEmpty
        }
    }
}
