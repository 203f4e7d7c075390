// swift-tools-version:6.0
import PackageDescription

// Courier's values in swift-http-types' vocabulary and back: a package of its own, so that
// Courier itself keeps no dependencies; it depends on Courier.
// In Courier's repository it names Courier by path, with the identity its URL will have;
// scripts/release makes it a repository of its own that names Courier by URL and version.
let package = Package(
    name: "CourierHTTPTypes",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CourierHTTPTypes", targets: ["CourierHTTPTypes"])
    ],
    dependencies: [
        .package(name: "courier", path: "../.."),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "CourierHTTPTypes",
            dependencies: [
                .product(name: "CourierCore", package: "courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
        .testTarget(
            name: "CourierHTTPTypesTests",
            dependencies: [
                "CourierHTTPTypes",
                .product(name: "Courier", package: "courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
