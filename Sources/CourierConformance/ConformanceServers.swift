import CourierCore
import CourierResilience
import CourierTesting
import Foundation

/// Where the loopback test servers listen: two httpbin instances on different origins (the same
/// server as `127.0.0.1` and as `localhost`, on two ports), the hostile server and the stream
/// server from Courier's `scripts/`. `scripts/test` starts them all and exports their addresses.
public struct ConformanceServers: Sendable, Hashable {
    /// httpbin, for example `http://127.0.0.1:8081`.
    public var httpbin: String
    /// A second httpbin on another origin, for example `http://localhost:8082`.
    public var otherOrigin: String
    /// `scripts/hostile_server.py`: truncated, corrupt and hostile answers.
    public var hostile: String
    /// `scripts/stream_server.py`: files with ranges, server-sent events, upload checks.
    public var stream: String
    /// `scripts/websocket_server.py`'s conforming peer (Python's `websockets`), for example
    /// `ws://127.0.0.1:8085`, from ``webSocketEnvironmentName``; `nil` when it is not set (only
    /// the WebSocket case needs it, and only for a transport that upgrades).
    public var webSocket: String? = ProcessInfo.processInfo.environment[webSocketEnvironmentName].flatMap { $0.isEmpty ? nil : $0 }

    /// The variable `scripts/test` sets to the WebSocket peer's address.
    public static let webSocketEnvironmentName = "COURIER_WEBSOCKET_URL"

    /// Creates the addresses.
    /// - Parameters:
    ///   - httpbin: The first httpbin.
    ///   - otherOrigin: The second httpbin, on another origin.
    ///   - hostile: The hostile server.
    ///   - stream: The stream server.
    public init(httpbin: String, otherOrigin: String, hostile: String, stream: String) {
        self.httpbin = httpbin
        self.otherOrigin = otherOrigin
        self.hostile = hostile
        self.stream = stream
    }

    /// The names of the environment variables `scripts/test` sets, in the order of the
    /// properties.
    public static let environmentNames = ["COURIER_HTTPBIN_URL", "COURIER_HTTPBIN_URL_2", "COURIER_HOSTILE_URL", "COURIER_STREAM_URL"]

    /// The names of the variables for the HTTPS mode: two httpbin instances behind TLS (the
    /// first on `127.0.0.1`, the second on `localhost`), with a certificate from the test
    /// authority in `COURIER_TLS_DIR`.
    public static let httpsEnvironmentNames = ["COURIER_HTTPBIN_TLS_URL", "COURIER_HTTPBIN_TLS_URL_2"]

    /// The servers for the HTTPS mode: the two httpbin instances behind TLS in place of the plain
    /// ones; the hostile and streaming servers stay plain HTTP (the cases they serve are about
    /// HTTP framing, not TLS).
    /// - Returns: The servers.
    /// - Throws: ``ConformanceFailure`` naming a missing variable.
    public static func httpsFromEnvironment() throws(ConformanceFailure) -> ConformanceServers {
        var servers = try fromEnvironment()
        let environment = ProcessInfo.processInfo.environment
        var values: [String] = []
        for name in httpsEnvironmentNames {
            guard let value = environment[name], !value.isEmpty else {
                throw ConformanceFailure(description: "\(name) is not set: run the tests with scripts/test, which starts the servers")
            }
            values.append(value)
        }
        servers.httpbin = values[0]
        servers.otherOrigin = values[1]
        return servers
    }

    /// The addresses `scripts/test` exported.
    /// - Returns: The servers.
    /// - Throws: ``ConformanceFailure`` naming the missing variable: the suite never skips, so
    ///   a run without servers cannot pass by accident.
    public static func fromEnvironment() throws(ConformanceFailure) -> ConformanceServers {
        let environment = ProcessInfo.processInfo.environment
        var values: [String] = []
        for name in environmentNames {
            guard let value = environment[name], !value.isEmpty else {
                throw ConformanceFailure(description: "\(name) is not set: run the tests with scripts/test, which starts the servers")
            }
            values.append(value)
        }
        return ConformanceServers(httpbin: values[0], otherOrigin: values[1], hostile: values[2], stream: values[3])
    }
}
