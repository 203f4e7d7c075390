// swift-tools-version:6.0
import PackageDescription

// Courier on SwiftNIO: an executor over AsyncHTTPClient. A package of its own, so that Courier
// itself keeps no dependencies; it depends on Courier's core (CourierCore, no FoundationNetworking).
// In Courier's repository it names Courier by path, with the identity its URL will have;
// scripts/release makes it a repository of its own that names Courier by URL and version.

/// The upcoming features every target here builds with, as Courier's own do.
let upcoming: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "CourierAsyncHTTPClient",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CourierAsyncHTTPClient", targets: ["CourierAsyncHTTPClient"])
    ],
    dependencies: [
        .package(name: "courier", path: "../.."),
        // What Courier's transports on SwiftNIO share (the body inflater, SwiftNIO's errors and
        // TLS options mapped once): CourierNIOSupport, not Courier's own HTTP client (CourierNIO,
        // which only the benchmarks link, to compare the two).
        .package(name: "courier-nio", path: "../NIO"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // TLS failures are read from SwiftNIO SSL's errors (already a dependency of AsyncHTTPClient).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // For a test that configures decompression (already a dependency of AsyncHTTPClient).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    ],
    targets: [
        .target(
            name: "CourierAsyncHTTPClient",
            dependencies: [
                .product(name: "CourierCore", package: "courier"),
                .product(name: "CourierNIOSupport", package: "courier-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // Not NIOFoundationCompat: it imports full Foundation, which a server need not link.
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: upcoming
        ),
        // Live rows of Benchmarks/README.md: Courier on AsyncHTTPClient and on its own transport
        // (CourierNIO) against raw AsyncHTTPClient and raw URLSession, each measurement in a
        // fresh process (Benchmarks/run).
        .executableTarget(
            name: "CourierAHCBenchmarks",
            dependencies: [
                "CourierAsyncHTTPClient",
                .product(name: "CourierNIO", package: "courier-nio"),
                .product(name: "Courier", package: "courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: upcoming
        ),
        // not released: begin
        // The soak on AsyncHTTPClient (Benchmarks/soak): mixed traffic for minutes, checked for
        // leaks. A tool of this repository: scripts/release leaves it out.
        .executableTarget(
            name: "CourierAHCSoak",
            dependencies: [
                "CourierAsyncHTTPClient",
                .product(name: "CourierSoak", package: "courier"),
            ],
            swiftSettings: upcoming
        ),
        // not released: end
        // Sends one request and prints the outcome, for the test that runs hostile response
        // heads in a child process (one of them makes AsyncHTTPClient trap).
        .executableTarget(
            name: "CourierAHCHeadProbe",
            dependencies: [
                "CourierAsyncHTTPClient",
                .product(name: "CourierCore", package: "courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        .testTarget(
            name: "CourierAsyncHTTPClientTests",
            dependencies: [
                "CourierAsyncHTTPClient",
                // Built with the tests: HostileHeadTests runs it as a child process.
                "CourierAHCHeadProbe",
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierConformance", package: "courier"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)
