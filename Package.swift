// swift-tools-version:6.0
import PackageDescription

/// Settings every target shares: Swift 6 language mode is set package-wide below; these upcoming
/// features keep existential and import use explicit.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// What CI holds code to, when `COURIER_STRICT` is set (`.ci/run` sets it): warnings are errors,
/// and so is an expression that costs the type checker more than a budget of solver scopes: 5,000
/// in the library and the Playground (long builder chains must stay cheap to compile; the costliest
/// here takes 1,000 to 2,000), 20,000 in tests (`#expect` over closures and collections; the
/// costliest takes 5,000 to 10,000). A count of the solver's work, not a stopwatch: the same
/// expression costs the same on a quiet machine and a busy one (a wall-time budget failed CI when
/// two other builds shared the machine), and over it the compiler stops with "unable to type-check
/// this expression in reasonable time" at the expression. Set per target so that one build serves
/// both, and in the manifest rather than on the command line so that every SwiftPM command on the
/// package (build, test, run, dump-symbol-graph) compiles the same way and nothing is compiled
/// twice. Without the variable (a package that depends on Courier never has it) the manifest has no
/// unsafe flags.
let strict = Context.environment["COURIER_STRICT"] != nil
func strictFlags(solverScopes: Int) -> [SwiftSetting] {
    guard strict else { return [] }
    return [.unsafeFlags(["-warnings-as-errors", "-Xfrontend", "-solver-scope-threshold=\(solverScopes)"])]
}
let librarySettings = strictSettings + strictFlags(solverScopes: 5_000)
let testSettings = strictSettings + strictFlags(solverScopes: 20_000)

let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        // The core and the URLSession transport: what an app imports.
        .library(name: "Courier", targets: ["Courier"]),
        // The core alone, for a transport of its own (CourierAsyncHTTPClient) and integrations:
        // no FoundationNetworking.
        .library(name: "CourierCore", targets: ["CourierCore"]),
        // The HTTP cache (RFC 9111), for a server on CourierCore that caches (`import Courier`
        // includes it).
        .library(name: "CourierCaching", targets: ["CourierCaching"]),
        // The cookie jar (RFC 6265bis, with the Public Suffix List compiled in), for a server on
        // CourierCore that keeps cookies (`import Courier` includes it).
        .library(name: "CourierCookies", targets: ["CourierCookies"]),
        // Retries, the retry budget, the circuit breaker, hedging, server pacing, concurrency
        // limits and attempt timeouts, for a server on CourierCore (`import Courier` includes it).
        .library(name: "CourierResilience", targets: ["CourierResilience"]),
        // WebSocket over any transport that upgrades connections (`import Courier` includes it).
        .library(name: "CourierWebSocket", targets: ["CourierWebSocket"]),
        // The test kit: the in-memory executor and its stubs, request verification, fault
        // injection, HAR recording and replay (`import Courier` includes it).
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        // The URLSession transport alone (`import Courier` includes it).
        .library(name: "CourierURLSession", targets: ["CourierURLSession"]),
        // The transport conformance suite, for packages that bring an executor of their own.
        .library(name: "CourierConformance", targets: ["CourierConformance"]),
        // not released: begin
        // The soak harness (mixed traffic for minutes, checked for leaks) that Benchmarks/soak
        // runs on each transport: a product only so that this repository's packages can run it;
        // scripts/release leaves it out of the released package (a tool, never API).
        .library(name: "CourierSoak", targets: ["CourierSoak"]),
        // not released: end
    ],
    targets: [
        // Requests, builders, resources, the exchange, the transport contract, streaming, errors,
        // logging: Foundation only.
        .target(
            name: "CourierCore",
            path: "Sources/CourierCore",
            swiftSettings: librarySettings
        ),
        // The HTTP cache and its stores, above the core: only a user who caches links it.
        .target(
            name: "CourierCaching",
            dependencies: ["CourierCore"],
            path: "Sources/CourierCaching",
            swiftSettings: librarySettings
        ),
        // The cookie jar and its middleware, above the core: only a user who keeps cookies links
        // the Public Suffix List (9,000 rules).
        .target(
            name: "CourierCookies",
            dependencies: ["CourierCore"],
            path: "Sources/CourierCookies",
            swiftSettings: librarySettings
        ),
        // The resilience middleware, above the core: only a user who retries or breaks links it.
        .target(
            name: "CourierResilience",
            dependencies: ["CourierCore"],
            path: "Sources/CourierResilience",
            swiftSettings: librarySettings
        ),
        // WebSocket (RFC 6455) over any transport that upgrades connections, above the core: the
        // handshake as a Courier call, framing, the closing handshake, pings.
        .target(
            name: "CourierWebSocket",
            dependencies: ["CourierCore"],
            path: "Sources/CourierWebSocket",
            swiftSettings: librarySettings
        ),
        // The test kit, above the core, resilience (fault injection speaks its events) and
        // WebSocket (the in-memory peer speaks its frames).
        .target(
            name: "CourierTesting",
            dependencies: ["CourierCore", "CourierResilience", "CourierWebSocket"],
            path: "Sources/CourierTesting",
            swiftSettings: librarySettings
        ),
        // URLSession (FoundationNetworking on Linux): the transport, URLRequest rendering, the
        // libcurl error texts.
        .target(
            name: "CourierURLSession",
            dependencies: ["CourierCore"],
            path: "Sources/CourierURLSession",
            swiftSettings: librarySettings
        ),
        // The umbrella `import Courier`, and the documentation catalog.
        .target(
            name: "Courier",
            dependencies: [
                "CourierCore", "CourierCaching", "CourierCookies", "CourierResilience", "CourierTesting", "CourierURLSession",
                "CourierWebSocket",
            ],
            path: "Sources/Courier",
            swiftSettings: librarySettings
        ),
        .target(
            name: "CourierConformance",
            dependencies: ["CourierCore", "CourierCaching", "CourierCookies", "CourierResilience", "CourierTesting", "CourierWebSocket"],
            path: "Sources/CourierConformance",
            swiftSettings: librarySettings
        ),
        // not released: begin
        .target(
            name: "CourierSoak",
            dependencies: ["CourierCore", "CourierConformance", "CourierWebSocket"],
            path: "Sources/CourierSoak",
            swiftSettings: librarySettings
        ),
        // not released: end
        .executableTarget(
            name: "Playground",
            dependencies: ["Courier"],
            path: "Playground",
            swiftSettings: librarySettings
        ),
        .target(
            name: "TestSupport",
            dependencies: ["Courier"],
            path: "Tests/TestSupport",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "Courier", "CourierConformance", "TestSupport",
                "CourierSoak", // not released
            ],
            path: "Tests/CourierTests",
            swiftSettings: testSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["Courier", "CourierConformance", "TestSupport"],
            path: "Tests/IntegrationTests",
            swiftSettings: testSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
