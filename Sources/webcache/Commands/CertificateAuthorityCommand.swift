import ArgumentParser
import Foundation
import WebCacheTLS

/// `webcache ca`: the certificate of this cache's authority, which an intercepting proxy's
/// clients must trust.
struct CertificateAuthorityCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Print the certificate of this cache's local certificate authority (made on first use).",
        discussion: """
            webcache proxy --intercept-https shows clients certificates issued by this \\
            authority; trust its certificate where the client looks (WebCacheProxy docs, "Caching HTTPS: \\
            interception", has recipes for Chromium, curl, WebKitGTK, URLSession and AsyncHTTPClient). \\
            The key stays in <cache-dir>/ca/ca-key.pem (mode 0600) and is never printed.
            """)

    @OptionGroup var cache: CacheOptions

    @Flag(help: "Print the certificate file's path instead of the certificate.")
    var path = false

    @Flag(help: "Print the base64 SHA-256 of the authority's public key (for pins) instead of the certificate.")
    var spki = false

    func validate() throws {
        if path && spki { throw ValidationError("--path and --spki cannot go together") }
    }

    func run() async throws {
        try await reportingFailures {
            let authority: CertificateAuthority
            do {
                authority = try CertificateAuthority.load(orCreateIn: cache.certificateAuthorityFolder)
            } catch {
                throw CommandFailure(.cacheUnusable, "cannot use the certificate authority: \(error)")
            }
            if path {
                print(authority.certificateFile?.path ?? "")
            } else if spki {
                print(authority.publicKeySHA256)
            } else {
                print(authority.certificatePEM, terminator: "")
            }
        }
    }
}
