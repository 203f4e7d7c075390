// swift-tools-version:6.0
import PackageDescription

// Courier's LoggingMiddleware writing to swift-log: a package of its own, so that Courier itself
// keeps no dependencies; it depends on Courier.
// In Courier's repository it names Courier by path, with the identity its URL will have;
// scripts/release makes it a repository of its own that names Courier by URL and version.
let package = Package(
    name: "CourierLogging",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CourierLogging", targets: ["CourierLogging"])
    ],
    dependencies: [
        .package(name: "courier", path: "../.."),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "CourierLogging",
            dependencies: [
                .product(name: "CourierCore", package: "courier"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
        .testTarget(
            name: "CourierLoggingTests",
            dependencies: [
                "CourierLogging",
                .product(name: "Courier", package: "courier"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
