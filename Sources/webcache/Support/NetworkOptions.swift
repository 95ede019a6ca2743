import ArgumentParser
import WebCache
import WebCacheNIO

/// Options of the commands that use the network: how long to wait for an origin before a
/// stored response is served instead.
struct NetworkOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Seconds to wait for the origin when a stored response could answer offline, then serve it (the fetch goes on in the background); 'off' waits as long as the origin client does. Overrides networkTimeout in --config.",
            valueName: "seconds"))
    var networkTimeout: String?

    @Option(
        help: ArgumentHelp(
            "A PEM file of certificate authorities HTTPS origins may also be signed by (beside the system's); repeatable. Adds to cacert in --config. Verification is never turned off.",
            valueName: "file"))
    var cacert: [String] = []

    @Option(
        help: ArgumentHelp(
            "Bytes of a response body taken from the origin; a longer one is cut there (the client, or the command, sees it end early). No limit by default for get and proxy, which read a body the cache does not keep only as fast as it is written on; 512 MiB for preload, which holds pages whole.",
            valueName: "bytes"))
    var maxResponseSize: Int?

    /// The trust for HTTPS origins: the system's roots, `cacert` in the configuration file and
    /// `--cacert`.
    func trust(_ options: CacheOptions) throws -> OriginTrust {
        try OriginTrust(certificateFiles: try options.configuredCACertificates() + cacert)
    }

    func validate() throws {
        _ = try seconds()
        if let maxResponseSize, maxResponseSize <= 0 {
            throw ValidationError("--max-response-size must be positive, not \(maxResponseSize)")
        }
    }

    /// The timeout given, as the policy spells it (0 for off); `nil` when not given.
    func seconds() throws -> Double? {
        guard let networkTimeout else { return nil }
        if networkTimeout == "off" { return 0 }
        guard let seconds = Double(networkTimeout), seconds.isFinite, seconds >= 0 else {
            throw ValidationError("--network-timeout must be a number of seconds ≥ 0 or 'off', not '\(networkTimeout)'")
        }
        return seconds
    }

    /// `policy` with the timeout given on the command line, if any.
    func applied(to policy: CachePolicy) throws -> CachePolicy {
        var policy = policy
        if let seconds = try seconds() { policy.networkTimeout = seconds }
        return policy
    }
}
