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
        // The core and the URLSession transport: what an app imports.
        .library(name: "Courier", targets: ["Courier"]),
        // The core alone, for a transport of its own (CourierAsyncHTTPClient) and integrations:
        // no FoundationNetworking.
        .library(name: "CourierCore", targets: ["CourierCore"]),
        // The URLSession transport alone (`import Courier` includes it).
        .library(name: "CourierURLSession", targets: ["CourierURLSession"]),
        // The transport conformance suite, for packages that bring an executor of their own.
        .library(name: "CourierConformance", targets: ["CourierConformance"]),
    ],
    targets: [
        // Requests, builders, resources, the exchange, middleware, streaming, recording, testing:
        // Foundation only.
        .target(
            name: "CourierCore",
            path: "Sources/CourierCore",
            swiftSettings: strictSettings
        ),
        // URLSession (FoundationNetworking on Linux): the transport, URLRequest rendering, the
        // libcurl error texts.
        .target(
            name: "CourierURLSession",
            dependencies: ["CourierCore"],
            path: "Sources/CourierURLSession",
            swiftSettings: strictSettings
        ),
        // The umbrella `import Courier`, and the documentation catalog.
        .target(
            name: "Courier",
            dependencies: ["CourierCore", "CourierURLSession"],
            path: "Sources/Courier",
            swiftSettings: strictSettings
        ),
        .target(
            name: "CourierConformance",
            dependencies: ["CourierCore"],
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
