import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The server's end of an in-memory connection a stub switched to another protocol
/// (``Stub/switchingProtocols(_:)``): the bytes the client writes, and a way to write
/// back, each way with backpressure. ``WebSocketPeer`` speaks WebSocket over it.
public struct UpgradedPeer: Sendable {
    /// What the client writes, as it writes it; it ends when the client closes.
    public let incoming: ByteStream
    let outgoing: ByteStream.Continuation
    let incomingEnd: ByteStream.Continuation

    /// Writes `bytes` to the client, waiting while it does not read.
    /// - Parameter bytes: The bytes.
    /// - Returns: `false` once the connection is closed.
    @discardableResult
    public func write(_ bytes: Data) async -> Bool {
        await outgoing.send(bytes)
    }

    /// Closes the connection both ways (a TCP close): the client's reads end and its writes fail.
    public func close() {
        outgoing.finish()
        incomingEnd.finish()
    }
}

/// The client's end of an in-memory switched connection.
struct InMemoryConnection: UpgradedConnection {
    let outgoing: ByteStream.Continuation
    let incoming: ByteStream.Continuation

    func write(_ bytes: Data) async throws {
        guard await outgoing.send(bytes) else {
            throw CourierError(.transport(TransportFailure(.connectionLost, message: "the in-memory peer closed the connection")))
        }
    }

    /// Written at once while the peer's side has room, as a network transport writes while
    /// its socket is writable: the test kit takes the same no-wait path as CourierNIO.
    func writeIfReady(count: Int, _ fill: (UnsafeMutableRawBufferPointer) -> Void) -> Bool {
        guard count > 0, outgoing.hasRoom(for: count) else { return false }
        var bytes = Data(count: count)
        bytes.withUnsafeMutableBytes(fill)
        return outgoing.yield(bytes)
    }

    func close() {
        outgoing.finish()
        incoming.finish()
    }
}
