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
        .library(name: "Courier", targets: ["Courier"])
    ],
    targets: [
        .target(
            name: "Courier",
            path: "Sources/Courier",
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
            dependencies: ["Courier", "TestSupport"],
            path: "Tests/CourierTests",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["Courier", "TestSupport"],
            path: "Tests/IntegrationTests",
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
