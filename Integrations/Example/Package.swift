// swift-tools-version:6.1
import PackageDescription

// A service's API client as a team would write it: a client generated from its OpenAPI document
// (Sources/NotesAPI/openapi.yaml), sent over AsyncHTTPClient, with retries, a bearer token that
// refreshes itself, swift-log, swift-metrics and swift-distributed-tracing. See README.md.
//
// It depends on Courier and every integration the way a user does. In Courier's repository they
// are named by path, each with the identity its URL will have; with COURIER_RELEASE_URL set
// (say `file:///tmp/release`, a folder that scripts/release filled), every one of them is
// resolved by URL and version instead, exactly as after publishing: scripts/check-release
// builds this package that way in CI.
let release = Context.environment["COURIER_RELEASE_URL"]
let version = Context.environment["COURIER_RELEASE_VERSION"] ?? "0.1.0"

/// Courier or one of its integrations: by URL from a release, or by path in this repository.
func courier(_ identity: String, path: String) -> Package.Dependency {
    if let release {
        return .package(url: "\(release)/\(identity)", from: Version(stringLiteral: version))
    }
    return .package(name: identity, path: path)
}

let package = Package(
    name: "NotesExample",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "NotesAPI", targets: ["NotesAPI"])
    ],
    dependencies: [
        courier("courier", path: "../.."),
        courier("courier-async-http-client", path: "../AsyncHTTPClient"),
        courier("courier-nio", path: "../NIO"),
        courier("courier-openapi", path: "../OpenAPI"),
        courier("courier-logging", path: "../Logging"),
        courier("courier-metrics", path: "../Metrics"),
        courier("courier-tracing", path: "../Tracing"),
        // A server turns off the runtime's default `FullFoundation` trait (and depends on nothing
        // that imports full Foundation): then it links FoundationEssentials only, no ICU data.
        // A package that needs what the trait guards (`ISO8601DateFormatter` options for the
        // runtime's date transcoder) writes `traits: ["FullFoundation"]` instead.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.0", traits: []),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        // The generated client (Generated/, made from openapi.yaml by swift-openapi-generator and
        // committed; Courier's scripts/generate-openapi regenerates it) and the service's one
        // place where the executor, its middleware and the client are put together.
        .target(
            name: "NotesAPI",
            dependencies: [
                .product(name: "CourierCore", package: "courier"),
                .product(name: "CourierResilience", package: "courier"),
                .product(name: "CourierAsyncHTTPClient", package: "courier-async-http-client"),
                .product(name: "CourierOpenAPI", package: "courier-openapi"),
                .product(name: "CourierLogging", package: "courier-logging"),
                .product(name: "CourierMetrics", package: "courier-metrics"),
                .product(name: "CourierTracing", package: "courier-tracing"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"]
        ),
        // `swift run NotesTour URL`: the client against a running httpbin, step by step.
        .executableTarget(
            name: "NotesTour",
            dependencies: [
                "NotesAPI",
                .product(name: "CourierCore", package: "courier"),
                .product(name: "CourierResilience", package: "courier"),
                .product(name: "CourierAsyncHTTPClient", package: "courier-async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "NotesAPITests",
            dependencies: [
                "NotesAPI",
                .product(name: "CourierCore", package: "courier"),
                .product(name: "CourierTesting", package: "courier"),
                .product(name: "CourierAsyncHTTPClient", package: "courier-async-http-client"),
                .product(name: "CourierNIO", package: "courier-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
