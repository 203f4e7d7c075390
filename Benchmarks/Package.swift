// swift-tools-version:6.0
import PackageDescription

// The benchmark package depends on Courier by path, so the library itself keeps zero
// dependencies. It is a plain release-mode executable: `Benchmarks/run` builds and runs it.
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "Courier", path: "..")],
    targets: [
        .executableTarget(
            name: "CourierBenchmarks",
            dependencies: [.product(name: "Courier", package: "Courier")],
            path: "Sources/CourierBenchmarks"
        ),
        // not released: begin
        // The soak on URLSession (Benchmarks/soak): mixed traffic for minutes, checked for leaks.
        .executableTarget(
            name: "URLSessionSoak",
            dependencies: [
                .product(name: "Courier", package: "Courier"),
                .product(name: "CourierSoak", package: "Courier"),
            ],
            path: "Sources/URLSessionSoak"
        ),
        // not released: end
        // Plain URLSession requests, no Courier: the baseline for what the platform keeps per
        // request (Benchmarks/soak --heaptrack-raw runs it under heaptrack).
        .executableTarget(
            name: "RawURLSessionRequests",
            path: "Sources/RawURLSessionRequests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
