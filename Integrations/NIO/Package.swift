// swift-tools-version:6.0
import PackageDescription

// Courier's own wire: a transport on SwiftNIO that speaks HTTP itself (no AsyncHTTPClient), so
// that every response head and every byte of framing is decided by Courier's rules. A package of
// its own, so that Courier itself keeps no dependencies; it depends on Courier's core
// (CourierCore, no FoundationNetworking). In Courier's repository it names Courier by path, with
// the identity its URL will have; scripts/release makes it a repository of its own.

/// The upcoming features every target here builds with, as Courier's own do.
let upcoming: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "CourierNIO",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CourierNIO", targets: ["CourierNIO"]),
        // What Courier's two transports on SwiftNIO share (the body inflater, SwiftNIO's errors and
        // TLS options mapped once), so that CourierAsyncHTTPClient links no second HTTP client.
        // Its API is SPI (`NIOTransports`): not for applications.
        .library(name: "CourierNIOSupport", targets: ["CourierNIOSupport"]),
        // The connection's pipeline on SwiftNIO's embedded channel, for Courier's fuzz target
        // (SPI `Fuzzing`): not for applications, and not linked by CourierNIO's users.
        .library(name: "CourierNIOProbe", targets: ["CourierNIOProbe"]),
    ],
    dependencies: [
        .package(name: "courier", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2", from: "1.46.0"),
    ],
    targets: [
        // zlib, which SwiftNIO's own HTTP compression links too: bodies are inflated piece by
        // piece, so that a size limit bounds memory and a cut stream is noticed.
        .systemLibrary(name: "CCourierNIOZlib", path: "Sources/CCourierNIOZlib"),
        .target(
            name: "CourierNIOSupport",
            dependencies: [
                "CCourierNIOZlib",
                .product(name: "CourierCore", package: "courier"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "CourierNIO",
            dependencies: [
                "CourierNIOSupport",
                .product(name: "CourierCore", package: "courier"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // Not NIOFoundationCompat: it imports full Foundation, which a server need not link.
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                // A stream's head is looked at (its :status) before SwiftNIO's codec reads it.
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "CourierNIOProbe",
            dependencies: [
                "CourierNIO",
                .product(name: "CourierCore", package: "courier"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        // not released: begin
        // The soak on Courier's own transport (Benchmarks/soak): mixed traffic for minutes, checked
        // for leaks. A tool of this repository: scripts/release leaves it out.
        .executableTarget(
            name: "CourierNIOSoak",
            dependencies: [
                "CourierNIO",
                .product(name: "CourierSoak", package: "courier"),
            ],
            swiftSettings: upcoming
        ),
        // not released: end
        .testTarget(
            name: "CourierNIOTests",
            dependencies: [
                "CourierNIO",
                "CourierNIOSupport",
                "CourierNIOProbe",
                // InflaterTests makes gzip members with zlib itself.
                "CCourierNIOZlib",
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierConformance", package: "courier"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // SwitchedHandlerTests runs a switched connection's handler without a socket.
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
    ],
    swiftLanguageModes: [.v6]
)
