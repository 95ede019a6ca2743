import ArgumentParser
import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import WebCacheTLS

/// `https-load`: a load generator for HTTPS hits, direct (a TLS server such as nginx) or
/// through a proxy's `CONNECT` (an intercepting WebCache proxy), so both are driven by the same
/// client; plus the certificates the benchmark's servers use, and the cost of minting one.
@main
struct HTTPSLoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "https-load",
        abstract:
            "Drive HTTPS requests at a TLS server, directly or through a proxy's CONNECT, and print the figures as JSON.",
        discussion: "scripts/bench-https.sh runs it; its results are in the README (HTTPS interception, speed).")

    @Option(help: "The TLS server, HOST:PORT (the origin, when --proxy is given).")
    var target: String?

    @Option(help: "A proxy to reach the target through with CONNECT, HOST:PORT.")
    var proxy: String?

    @Option(help: "The request path.")
    var path = "/1k.bin"

    @Option(help: "A PEM file of the authority the server's certificate must chain to.")
    var cacert: String?

    @Option(help: "Connections at once.")
    var connections = 64

    @Option(help: "Seconds to run (after a one-second warm-up).")
    var duration = 10.0

    @Option(
        help:
            "The only key exchange group offered: x25519, p256 or x25519mlkem768 (default: BoringSSL's list, which prefers X25519MLKEM768)."
    )
    var curve: String?

    @Flag(help: "A new connection (CONNECT and full TLS handshake) for every request, instead of keep-alive.")
    var handshakes = false

    @Option(
        help:
            "Write the benchmark's certificates into this folder (origin CA, origin and front leaves) and exit; the front leaf is issued by the authority in --authority."
    )
    var makeCertificates: String?

    @Option(
        help:
            "With --make-certificates: the folder of the authority that issues the front certificate (a WebCache cache's ca/)."
    )
    var authority: String?

    @Option(help: "Time minting this many leaf certificates (distinct hosts) and exit.")
    var mint: Int?

    func run() async throws {
        if let makeCertificates {
            try BenchmarkCertificates.write(
                into: URL(fileURLWithPath: makeCertificates), frontAuthority: authority.map { URL(fileURLWithPath: $0) }
            )
            return
        }
        if let mint {
            try MintTiming.run(count: mint)
            return
        }
        guard let target, let cacert else { throw ValidationError("--target and --cacert are needed") }
        let trust = try NIOSSLCertificate.fromPEMFile(cacert)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(trust)
        tls.applicationProtocols = ["http/1.1"]
        if let curve {
            let groups: [String: NIOTLSCurve] = [
                "x25519": .x25519, "p256": .secp256r1, "x25519mlkem768": .x25519_MLKEM768,
            ]
            guard let group = groups[curve] else {
                throw ValidationError("--curve must be one of \(groups.keys.sorted().joined(separator: ", "))")
            }
            tls.curves = [group]
        }
        let plan = LoadPlan(
            target: try Address(target), proxy: try proxy.map(Address.init), path: path,
            tls: try NIOSSLContext(configuration: tls),
            keepAlive: !handshakes)
        let result = try await LoadRun(plan: plan, connections: connections, duration: duration).run()
        print(result.json)
    }
}

/// `host:port`.
struct Address: Sendable {
    var host: String
    var port: Int

    init(_ text: String) throws {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
            throw ValidationError("'\(text)' is not HOST:PORT")
        }
        host = String(text[..<colon])
        self.port = port
    }

    var text: String { "\(host):\(port)" }
}

/// What each connection does.
struct LoadPlan: Sendable {
    var target: Address
    var proxy: Address?
    var path: String
    var tls: NIOSSLContext
    var keepAlive: Bool
}

/// The times of issuing leaf certificates, as an intercepting proxy does for each new host.
enum MintTiming {
    static func run(count: Int) throws {
        let certificates = try InterceptionCertificates(authority: try CertificateAuthority.make(), capacity: count + 1)
        for index in 0..<50 { _ = try certificates.mint("warm\(index).example") }
        var times: [Double] = []
        for index in 0..<count {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = try certificates.mint("host\(index).example.com")
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
        }
        times.sort()
        print(
            #"{"mints": \#(count), "median_us": \#(String(format: "%.1f", times[count / 2])), "p99_us": \#(String(format: "%.1f", times[count * 99 / 100]))}"#
        )
    }
}

/// The certificates of the HTTPS benchmark: an origin CA with a leaf for 127.0.0.1 (the
/// origin's), and a leaf for 127.0.0.1 from WebCache's own authority (nginx's front, so that the
/// client trusts one authority for both caches), each with its key.
enum BenchmarkCertificates {
    static func write(into folder: URL, frontAuthority: URL?) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let originAuthority = try CertificateAuthority.make(commonName: "benchmark origin CA")
        try originAuthority.certificatePEM.write(
            to: folder.appendingPathComponent("origin-ca.pem"), atomically: true, encoding: .utf8)
        try leaf(from: originAuthority, name: "origin", into: folder)
        let front =
            try frontAuthority.map { try CertificateAuthority.load(orCreateIn: $0) }
            ?? CertificateAuthority.make(commonName: "benchmark front CA")
        try front.certificatePEM.write(
            to: folder.appendingPathComponent("front-ca.pem"), atomically: true, encoding: .utf8)
        try leaf(from: front, name: "front", into: folder)
    }

    private static func leaf(from authority: CertificateAuthority, name: String, into folder: URL) throws {
        let key = P256.Signing.PrivateKey()
        let certificate = try authority.issueServerCertificate(for: "127.0.0.1", publicKey: key.publicKey)
        try (certificate.serializeAsPEM().pemString + "\n").write(
            to: folder.appendingPathComponent("\(name).pem"), atomically: true, encoding: .utf8)
        try (key.pemRepresentation + "\n").write(
            to: folder.appendingPathComponent("\(name)-key.pem"), atomically: true, encoding: .utf8)
    }
}
