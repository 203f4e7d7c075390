// swift-tools-version:6.0
import PackageDescription

/// Settings every target shares: Swift 6 language mode is set package-wide below; these upcoming
/// features keep existential and import use explicit.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        // The transport conformance suite, for packages that bring an executor of their own.
        .library(name: "CourierConformance", targets: ["CourierConformance"]),
    ],
    targets: [
        .target(
            name: "Courier",
            path: "Sources/Courier",
            swiftSettings: strictSettings
        ),
        .target(
            name: "CourierConformance",
            dependencies: ["Courier"],
            path: "Sources/CourierConformance",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "Playground",
            dependencies: ["Courier"],
            path: "Playground",
            swiftSettings: strictSettings
        ),
        .target(
            name: "TestSupport",
            dependencies: ["Courier"],
            path: "Tests/TestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: ["Courier", "CourierConformance", "TestSupport"],
            path: "Tests/CourierTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["Courier", "CourierConformance", "TestSupport"],
            path: "Tests/IntegrationTests",
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
