// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "WebCache",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "HTTPCaching", targets: ["HTTPCaching"]),
        .executable(name: "webcache", targets: ["webcache"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-http-structured-headers", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(
            name: "HTTPCaching",
            dependencies: [
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
            ]
        ),
        .executableTarget(
            name: "webcache",
            dependencies: [
                "HTTPCaching",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        .target(
            name: "WebCacheTestSupport",
            dependencies: ["HTTPCaching", .product(name: "HTTPTypes", package: "swift-http-types")],
            path: "Tests/WebCacheTestSupport"
        ),
        .testTarget(
            name: "HTTPCachingTests",
            dependencies: ["HTTPCaching", "WebCacheTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
