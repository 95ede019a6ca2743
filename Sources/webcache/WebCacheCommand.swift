import ArgumentParser

/// The `webcache` command: the root only configures; the work is in the libraries.
@main
struct WebCacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webcache",
        abstract: "An offline-first HTTP cache: inspect, fill and serve a WebCache.",
        discussion: """
            WebCache caches web content by the rules of RFC 9111, with app policies on top \
            (TTL overrides, offline use, allow and block lists) and keeps it on disk.
            """,
        version: "0.1.0",
        subcommands: [
            DemoCommand.self, PreloadCommand.self, GetCommand.self, ExplainCommand.self, ListCommand.self,
            StatsCommand.self, RemoveCommand.self,
            PurgeCommand.self, ProxyCommand.self, AnalyzeCommand.self, CertificateAuthorityCommand.self,
        ]
    )
}
