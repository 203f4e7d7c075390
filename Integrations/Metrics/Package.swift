// swift-tools-version:6.0
import PackageDescription

// Courier's HTTP client metrics on swift-metrics: a package of its own, so that Courier itself
// keeps no dependencies; it depends on Courier.
// In Courier's repository it names Courier by path, with the identity its URL will have;
// scripts/release makes it a repository of its own that names Courier by URL and version.
let package = Package(
    name: "CourierMetrics",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CourierMetrics", targets: ["CourierMetrics"])
    ],
    dependencies: [
        .package(name: "courier", path: "../.."),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    ],
    targets: [
        .target(
            name: "CourierMetrics",
            dependencies: [
                .product(name: "CourierCore", package: "courier"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
        .testTarget(
            name: "CourierMetricsTests",
            dependencies: [
                "CourierMetrics",
                .product(name: "Courier", package: "courier"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
