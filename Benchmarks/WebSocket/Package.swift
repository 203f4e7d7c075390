// swift-tools-version:6.2
import PackageDescription

// WebSocket echo round trips: Courier's socket on its own transport (CourierNIO) against the
// clients a server on SwiftNIO would otherwise pick, hummingbird-project/swift-websocket's
// `WebSocketClient` and vapor/websocket-kit, all three against one echo server on
// hummingbird-websocket. A package of its own (the library and CourierNIO keep their dependencies):
// `Benchmarks/run` with `COURIER_BENCH_ONLY=websocket` builds it in release mode, starts the
// server and runs each batch in a fresh process (Benchmarks/live.py); CI builds it.
let package = Package(
    name: "CourierWebSocketBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "courier", path: "../.."),
        .package(name: "courier-nio", path: "../../Integrations/NIO"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/vapor/websocket-kit", from: "2.16.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The server every client talks to: an echo on hummingbird-websocket, permessage-deflate
        // offered (used only by a client that asks for it).
        .executableTarget(
            name: "WebSocketEchoServer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSCompression", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "CourierWebSocketBenchmarks",
            dependencies: [
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierNIO", package: "courier-nio"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "WSCompression", package: "swift-websocket"),
                .product(name: "WebSocketKit", package: "websocket-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
