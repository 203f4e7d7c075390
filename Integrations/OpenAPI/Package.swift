// swift-tools-version:6.1
import PackageDescription

// A swift-openapi-runtime ClientTransport over any Courier executor: a package of its own, so
// that Courier itself keeps no dependencies; it depends on Courier and its swift-http-types
// bridge.
// In Courier's repository it names Courier by path, with the identity its URL will have;
// scripts/release makes it a repository of its own that names Courier by URL and version.
let package = Package(
    name: "CourierOpenAPI",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "CourierOpenAPI", targets: ["CourierOpenAPI"])
    ],
    dependencies: [
        .package(name: "courier", path: "../.."),
        .package(name: "courier-http-types", path: "../HTTPTypes"),
        // Tests only: the generated client over the other transport too.
        .package(name: "courier-async-http-client", path: "../AsyncHTTPClient"),
        // No traits: the runtime's default `FullFoundation` would link full Foundation (and ICU)
        // into every server that uses this package; an app that wants it enables it itself.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.0", traits: []),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "CourierOpenAPI",
            dependencies: [
                .product(name: "CourierCore", package: "courier"),
                .product(name: "CourierHTTPTypes", package: "courier-http-types"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
        // The client in Generated/ was made from openapi.yaml by swift-openapi-generator
        // (Courier's scripts/generate-openapi regenerates it); committed, so that building the tests
        // needs no generator.
        .testTarget(
            name: "CourierOpenAPITests",
            dependencies: [
                "CourierOpenAPI",
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierAsyncHTTPClient", package: "courier-async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
