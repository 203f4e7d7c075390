@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationEssentialsCompat

/// A connection the server switched to another protocol, as Courier's core takes it
/// (``/Courier/UpgradedConnection``): the channel wrapped with backpressure both ways. A task
/// of its own pumps what the server sends into the `101`'s body stream (waiting while the reader
/// is behind, so the socket stops being read) and holds the writer; the channel closes when
/// either side ends: the body stream stopped, ``close()``, the server's close.
struct SwitchedConnection: UpgradedConnection {
    let channel: any Channel
    let writer: NIOAsyncChannelOutboundWriter<ByteBuffer>

    /// The connection over `wrapped` and the stream of the server's bytes; `nil` when the channel
    /// closed before the pump could start.
    static func start(_ wrapped: NIOAsyncChannel<ByteBuffer, ByteBuffer>, request: Request, bufferLimit: Int) async
        -> (SwitchedConnection, ByteStream)?
    {
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: bufferLimit)
        let channel = wrapped.channel
        let writer: NIOAsyncChannelOutboundWriter<ByteBuffer>? = await withCheckedContinuation { handOver in
            // Resumed once: with the writer as the pump starts, or with `nil` if it never does.
            let pending = NIOLockedValueBox<CheckedContinuation<NIOAsyncChannelOutboundWriter<ByteBuffer>?, Never>?>(handOver)
            let give = { @Sendable (writer: NIOAsyncChannelOutboundWriter<ByteBuffer>?) in
                pending.withLockedValue { pending in
                    defer { pending = nil }
                    return pending
                }?.resume(returning: writer)
            }
            let pump = Task {
                do {
                    try await wrapped.executeThenClose { inbound, outbound in
                        give(outbound)
                        for try await buffer in inbound {
                            let data = Data(buffer: buffer, byteTransferStrategy: buffer.readableBytes >= 4096 ? .noCopy : .copy)
                            guard await continuation.send(data) else { return }
                        }
                        continuation.finish()
                    }
                } catch {
                    continuation.finish(throwing: TransportErrors.courierError(for: error, request: request, duringBody: true))
                }
                give(nil)
            }
            continuation.onTermination {
                pump.cancel()
                channel.close(promise: nil)
            }
            _ = pump
        }
        guard let writer else { return nil }
        return (SwitchedConnection(channel: channel, writer: writer), stream)
    }

    func write(_ bytes: Data) async throws {
        try await writer.write(ByteBuffer(data: bytes))
    }

    func close() {
        channel.close(promise: nil)
    }
}
