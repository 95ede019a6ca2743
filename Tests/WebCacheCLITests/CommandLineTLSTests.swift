import Foundation
import Testing
import WebCacheTestSupport

@Suite("webcache ca, and --cacert for HTTPS origins", .serialized)
struct CommandLineTLSTests {
    @Test(
        "webcache ca prints the certificate (made on first use), --path its file, --spki the key's pin; never the key")
    func printsAuthority() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let directory = temporary.url.path
        let pem = try await WebCacheProcess.run(["ca", "--cache-dir", directory])
        #expect(pem.status == 0)
        #expect(pem.output.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(!pem.output.contains("PRIVATE KEY"))
        let path = try await WebCacheProcess.run(["ca", "--cache-dir", directory, "--path"])
        #expect(path.output == temporary.url.appendingPathComponent("ca/ca.pem").path + "\n")
        #expect(
            try String(contentsOfFile: path.output.trimmingCharacters(in: .newlines), encoding: .utf8) == pem.output)
        let again = try await WebCacheProcess.run(["ca", "--cache-dir", directory])
        #expect(again.output == pem.output, "the authority is made once")
        let pin = try await WebCacheProcess.run(["ca", "--cache-dir", directory, "--spki"])
        #expect(Data(base64Encoded: pin.output.trimmingCharacters(in: .newlines))?.count == 32)

        chmod(temporary.url.appendingPathComponent("ca/ca-key.pem").path, 0o644)
        let refused = try await WebCacheProcess.run(["ca", "--cache-dir", directory])
        #expect(refused.status == 73)
        #expect(refused.error.contains("open to other users"))
    }

    @Test(
        "get verifies an HTTPS origin against the system's roots plus --cacert (or cacert in --config); never without")
    func getWithAuthority() async throws {
        let temporary = try TemporaryDirectory()
        defer { temporary.remove() }
        let tls = try TestTLS()
        try await TestOrigin.with(tls: tls) { origin in
            origin.route("/secure") { _ in .text("over TLS", headers: [("Cache-Control", "max-age=600")]) }
            let authorityFile = try tls.writeAuthority(into: temporary.url)
            let cache = temporary.url.appendingPathComponent("cache").path
            let url = origin.url("/secure").absoluteString

            let untrusted = try await WebCacheProcess.run(["get", url, "--cache-dir", cache])
            #expect(untrusted.status == 69)
            #expect(untrusted.error.contains("failed TLS verification"), "\(untrusted.error)")
            let trusted = try await WebCacheProcess.run(["get", url, "--cache-dir", cache, "--cacert", authorityFile])
            #expect(trusted.status == 0)
            #expect(trusted.output.contains("over TLS"))

            let config = temporary.url.appendingPathComponent("webcache.yaml")
            try "cacert: origin-ca.pem\n".write(to: config, atomically: true, encoding: .utf8)
            let configured = try await WebCacheProcess.run([
                "get", url, "--cache-dir", cache + "-2", "--config", config.path,
            ])
            #expect(configured.status == 0)

            let missing = try await WebCacheProcess.run([
                "get", url, "--cache-dir", cache, "--cacert", "/nonexistent.pem",
            ])
            #expect(missing.status == 64)
            #expect(missing.error.contains("/nonexistent.pem"))
        }
    }
}
