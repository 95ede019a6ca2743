// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "WebCache",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "HTTPCaching", targets: ["HTTPCaching"]),
        .library(name: "WebCacheStore", targets: ["WebCacheStore"]),
        .library(name: "WebCache", targets: ["WebCache"]),
        .library(name: "WebCacheNIO", targets: ["WebCacheNIO"]),
        .library(name: "WebCacheAsyncHTTPClient", targets: ["WebCacheAsyncHTTPClient"]),
        .library(name: "WebCacheYAML", targets: ["WebCacheYAML"]),
        .library(name: "WebCacheProxy", targets: ["WebCacheProxy"]),
        .library(name: "WebCacheTLS", targets: ["WebCacheTLS"]),
        .library(name: "WebCachePreload", targets: ["WebCachePreload"]),
        .executable(name: "webcache", targets: ["webcache"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // `swift package generate-documentation`: the DocC catalogs (Sources/*/*.docc).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(
            name: "HTTPCaching",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
            ]
        ),
        .target(
            name: "WebCacheStore",
            dependencies: [
                "HTTPCaching",
                "CChecksum",
                "CFileSpace",
                "CSQLiteSettings",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite itself, for the one query on the hit path (`EntryLookup`).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "WebCache",
            dependencies: [
                // The engine, the URLProtocol and the URLSession origin: no event loops, no
                // YAML. Those come with WebCacheNIO, WebCacheAsyncHTTPClient and WebCacheYAML.
                "HTTPCaching", "WebCacheStore",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "HTTPWire",
            dependencies: [
                // HTTP/1.1 on the wire: the proxy's request parser and its origin client's
                // response parser, on SwiftNIO's byte buffers.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "WebCacheNIO",
            dependencies: [
                "WebCache", "HTTPCaching", "HTTPWire", "CZlib",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "WebCacheAsyncHTTPClient",
            dependencies: [
                "WebCache", "WebCacheNIO", "HTTPCaching",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "WebCacheYAML",
            dependencies: [
                "WebCache", "HTTPCaching",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        .target(
            name: "WebCacheProxy",
            dependencies: [
                // Not WebCacheStore: the store stays behind the engine.
                "WebCache", "WebCacheNIO", "HTTPCaching", "HTTPWire", "WebCacheTLS", "CProcessorAffinity",
                "CUnnamedFiles",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .target(
            name: "WebCacheTLS",
            dependencies: [
                "HTTPCaching",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"]), .brew(["libxml2"])]
        ),
        .target(name: "CHTMLScan", dependencies: ["CLibXML2"]),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]
        ),
        .target(name: "CChecksum", dependencies: ["CZlib"]),
        .target(name: "CAllocatorTuning"),
        .target(name: "CProcessorAffinity"),
        .target(name: "CUnnamedFiles"),
        .target(name: "CFileSpace"),
        // The writer's connection settings that only SQLite's variadic C interface reaches.
        .target(name: "CSQLiteSettings", linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "WebCachePreload",
            dependencies: [
                "WebCache", "WebCacheStore", "CHTMLScan",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "WebCacheDemo",
            dependencies: [
                "WebCacheTLS",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "webcache",
            dependencies: [
                "HTTPCaching", "WebCache", "WebCacheNIO", "WebCacheAsyncHTTPClient", "WebCacheYAML", "WebCacheStore",
                "WebCacheProxy",
                "WebCachePreload", "WebCacheDemo", "WebCacheTLS", "CAllocatorTuning",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .executableTarget(
            name: "webcache-bench",
            dependencies: [
                "WebCacheStore", "HTTPCaching", "WebCache", "WebCacheAsyncHTTPClient", "WebCacheProxy",
                "WebCachePreload", "WebCacheTestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/WebCacheBenchmarks"
        ),
        .executableTarget(
            name: "https-load",
            dependencies: [
                "WebCacheTLS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/HTTPSLoad"
        ),
        .executableTarget(
            name: "forwarding-floor",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/ForwardingFloor"
        ),
        .executableTarget(
            name: "body-write-floor",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ],
            path: "Benchmarks/BodyWriteFloor"
        ),
        .executableTarget(
            name: "seek-floor",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/SeekFloor"
        ),
        .executableTarget(
            name: "webcache-fuzz",
            dependencies: [
                "HTTPCaching", "WebCacheTestSupport", "HTTPWire", "WebCachePreload",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Fuzz/WebCacheFuzz"
        ),
        .target(name: "CChildProcess", path: "Tests/CChildProcess"),
        .target(
            name: "WebCacheTestSupport",
            dependencies: [
                "HTTPCaching", "HTTPWire", "WebCacheTLS", "WebCache", "WebCacheNIO", "WebCacheAsyncHTTPClient",
                "WebCacheProxy", "WebCacheStore", "CChildProcess", "CZlib",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/WebCacheTestSupport"
        ),
        .testTarget(
            name: "HTTPCachingTests",
            dependencies: ["HTTPCaching", "WebCacheTestSupport"]
        ),
        .testTarget(
            name: "WebCacheTests",
            dependencies: [
                "WebCache", "WebCacheNIO", "WebCacheAsyncHTTPClient", "WebCacheYAML", "HTTPCaching", "WebCacheStore",
                "WebCacheTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "WebCacheNIOTests",
            dependencies: [
                "WebCacheNIO", "WebCache", "HTTPCaching", "WebCacheTestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "WebCacheURLProtocolTests",
            dependencies: ["WebCache", "HTTPCaching", "WebCacheTestSupport"]
        ),
        .testTarget(
            name: "HTTPWireTests",
            dependencies: [
                "HTTPWire", "WebCacheTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "WebCacheProxyTests",
            dependencies: [
                "WebCacheProxy", "HTTPWire", "WebCache", "WebCacheNIO", "WebCacheAsyncHTTPClient", "WebCacheYAML",
                "HTTPCaching",
                "WebCacheStore", "WebCacheTLS",
                "WebCacheTestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "WebCacheCLITests",
            dependencies: [
                "webcache", "WebCache", "HTTPCaching", "WebCacheStore", "WebCacheDemo", "WebCacheTLS",
                "WebCacheTestSupport",
            ]
        ),
        .testTarget(
            name: "WebCacheTLSTests",
            dependencies: [
                "WebCacheTLS", "WebCacheTestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        ),
        .testTarget(
            name: "WebCachePreloadTests",
            dependencies: [
                "WebCachePreload", "WebCache", "WebCacheAsyncHTTPClient", "WebCacheStore", "WebCacheDemo",
                "WebCacheTestSupport", "webcache",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .testTarget(
            name: "WebCacheStoreTests",
            dependencies: [
                "WebCacheStore", "HTTPCaching", "WebCacheTestSupport", .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
