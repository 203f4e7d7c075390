import CourierCore
import CourierNIO
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOEmbedded
import NIOFoundationEssentialsCompat
import NIOHTTP1

/// What the transport makes of bytes a server sends, without a network: the connection's own
/// pipeline (SwiftNIO's response decoder, then CourierNIO's `HTTP1Handler`) on an embedded
/// channel, fed the bytes in the pieces given, then closed by the "server". For the
/// `HTTP1Response` fuzz target and for tests of hostile answers that need no server (SPI
/// `Fuzzing`). A module of its own (CourierNIOProbe), so that SwiftNIO's embedded channel, a test
/// tool, is never linked by CourierNIO's users.
@_spi(Fuzzing) public enum ResponseProbe {
    /// How one exchange ended.
    public struct Outcome: Sendable, Equatable {
        /// The status and body of the answer, or the failure as Courier types it.
        public var result: Result
        /// Whether the connection was handed back for another request.
        public var reusable: Bool

        /// Creates an outcome (to compare one with).
        public init(result: Result, reusable: Bool) {
            self.result = result
            self.reusable = reusable
        }

        public enum Result: Sendable, Equatable {
            case answer(status: Int, body: Data)
            case failure(TransportFailure.Kind?, String)
        }
    }

    /// Sends a request (`HEAD` when `head`, `GET` otherwise) on a fresh connection and feeds the
    /// answer `pieces` in order, then closes the connection from the server's side.
    /// - Returns: What the hop gave, and whether the connection would be lent again.
    public static func run(_ pieces: [[UInt8]], head: Bool = false) -> Outcome {
        let handler = HTTP1Handler()
        let channel = EmbeddedChannel(handlers: [
            HTTPRequestEncoder(),
            ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)),
            handler,
        ])
        var reusable = false
        _ = try? channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        let request = HTTPRequestHead(
            version: .http1_1, method: head ? .HEAD : .GET, uri: "/", headers: ["Host": "probe.test"])
        let call = HTTP1Call(
            head: request, bodyInHand: nil, upload: nil, progress: nil, gathers: true, eventLoop: channel.embeddedEventLoop)
        handler.onIdle = { reusable = $0 }
        handler.start(call)
        _ = try? channel.readOutbound(as: ByteBuffer.self)
        for piece in pieces where channel.isActive {
            _ = try? channel.writeInbound(ByteBuffer(bytes: piece))
        }
        // The server closes: a body delimited by the close ends; a cut one is truncated.
        if channel.isActive { _ = try? channel.close().wait() }
        channel.embeddedEventLoop.run()
        let outcome: Outcome.Result
        let courierRequest = Request.get |> url("http://probe.test/")
        do {
            let answer = try call.answer.wait()
            var body = Data()
            if case .complete(let buffer?) = answer.body { body = Data(buffer: buffer) }
            outcome = .answer(status: Int(answer.head.status.code), body: body)
        } catch {
            let mapped = TransportErrors.courierError(for: error, request: courierRequest)
            if case .transport(let failure) = mapped.cause {
                outcome = .failure(failure.kind, failure.message)
            } else {
                outcome = .failure(nil, mapped.summary)
            }
        }
        _ = try? channel.finish(acceptAlreadyClosed: true)
        return Outcome(result: outcome, reusable: reusable)
    }
}
