#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A call's request to switch its connection to another protocol once the server agrees (HTTP/1.1
/// `Upgrade`, RFC 9110 §7.8): how a WebSocket is opened (CourierWebSocket's
/// `Executor.webSocket(_:options:)` sets one on ``StreamOptions/upgrade``).
///
/// The request goes through the exchange like any other (per-call and per-hop middleware,
/// redirects, the timeout while it waits for the head). A transport that offers upgrades
/// (``UpgradesConnections``) writes `Connection: Upgrade` and `Upgrade:` ``protocolName`` on the
/// hop (a caller cannot: ``Request/validate()`` refuses both), and when the server answers
/// `101 Switching Protocols` it hands over the connection with ``accept(_:)``: the response's
/// body is then every byte the server sends after the head, with the transport's backpressure,
/// and the connection writes what the new protocol sends. The exchange holds no body rules to a
/// switched connection (no size limit, no idle timer): the protocol above sets its own.
public final class HTTPUpgrade: Sendable {
    /// The protocol asked for, as the `Upgrade` header names it (`websocket`).
    public let protocolName: String
    /// The connection handed over, and the executor its reads arrive on (an `any TaskExecutor`,
    /// kept untyped: task executors need macOS 15 and its peers).
    private let handedOver = Locked<(connection: any UpgradedConnection, executor: (any Sendable)?)?>(nil)

    /// A request to switch to `protocolName`.
    /// - Parameter protocolName: The `Upgrade` token, such as `websocket`.
    public init(protocolName: String) {
        self.protocolName = protocolName
    }

    /// Hands over the connection the server switched: called by the transport when a `101`
    /// answers the hop, before it returns the response. A second hand-over (a retried hop)
    /// replaces the first, which is closed.
    /// - Parameter connection: The connection, now speaking ``protocolName``.
    public func accept(_ connection: any UpgradedConnection) {
        handOver(connection, executor: nil)
    }

    /// Hands over the connection the server switched, with the executor its bytes arrive on (a
    /// transport's event loop): the new protocol's read loop runs there, so each read reaches it
    /// without a thread hand-off. As ``accept(_:)`` otherwise.
    /// - Parameters:
    ///   - connection: The connection, now speaking ``protocolName``.
    ///   - executor: Where the connection's reads are delivered.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public func accept(_ connection: any UpgradedConnection, readingOn executor: any TaskExecutor) {
        handOver(connection, executor: executor)
    }

    private func handOver(_ connection: any UpgradedConnection, executor: (any Sendable)?) {
        let previous = handedOver.withLock { state in
            defer { state = (connection, executor) }
            return state?.connection
        }
        previous?.close()
    }

    /// The connection the transport handed over, or `nil` when no hop was switched.
    public var connection: (any UpgradedConnection)? { handedOver.withLock { $0?.connection } }

    /// The executor the handed-over connection's reads arrive on, when the transport named one.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public var readingExecutor: (any TaskExecutor)? { handedOver.withLock { $0?.executor } as? any TaskExecutor }
}

/// The writing half of a connection switched to another protocol (see ``HTTPUpgrade``); what the
/// server sends arrives as the `101` response's body.
public protocol UpgradedConnection: Sendable {
    /// Writes `bytes` as one piece (nothing else is written in the middle of it), suspending
    /// while the connection cannot take more.
    /// - Parameter bytes: The bytes.
    /// - Throws: When the connection is closed or failed.
    func write(_ bytes: Data) async throws
    /// Writes the `count` bytes that `fill` puts into a buffer of the transport's own, as one
    /// piece, as ``write(_:)`` does: a protocol's frame is encoded once, where it is sent from,
    /// not into a `Data` first. A transport that does not implement it gets a `Data` filled and
    /// written.
    /// - Parameters:
    ///   - count: How many bytes `fill` writes: all of the buffer it is given.
    ///   - fill: Writes the bytes; called once, before anything is sent.
    /// - Throws: When the connection is closed or failed.
    func write(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) async throws
    /// Writes the `count` bytes `fill` puts into the transport's buffer now, as
    /// ``write(count:_:)`` does, when the connection can take them without waiting; returns
    /// `false` (and does not call `fill`) when it would have to wait or is closed: then call
    /// ``write(count:_:)``. A protocol's sender uses it to send without suspending while the
    /// connection has room. By default it returns `false`.
    func writeIfReady(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> Bool
    /// Closes the connection, both ways: the body stream ends and further writes fail. Calling
    /// it again does nothing.
    func close()
}

extension UpgradedConnection {
    /// A `Data` of `count` bytes filled by `fill`, then ``write(_:)``.
    public func write(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) async throws {
        var bytes = Data(count: max(0, count))
        bytes.withUnsafeMutableBytes(fill)
        try await write(bytes)
    }

    /// `false`: every write goes through ``write(count:_:)``.
    public func writeIfReady(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> Bool { false }
}
