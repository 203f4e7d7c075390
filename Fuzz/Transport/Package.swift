// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets that need SwiftNIO, built by SwiftPM (scripts/fuzz passes the sanitizer
// flags): CourierNIO's connection pipeline fed what a hostile server sends.
let package = Package(
    name: "CourierNIOFuzz",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "courier", path: "../.."),
        .package(name: "courier-nio", path: "../../Integrations/NIO"),
    ],
    targets: [
        // libFuzzer's driver declared for Swift: SwiftPM gives an executable its own entry point,
        // so a target calls the driver from `main` instead of linking libFuzzer's.
        .target(name: "CLibFuzzer"),
        // HTTP1Response: what a connection makes of any bytes as an answer (Fuzz/README.md).
        .executableTarget(
            name: "HTTP1Response",
            dependencies: [
                "CLibFuzzer",
                .product(name: "CourierCore", package: "courier"),
                .product(name: "CourierNIOProbe", package: "courier-nio"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
