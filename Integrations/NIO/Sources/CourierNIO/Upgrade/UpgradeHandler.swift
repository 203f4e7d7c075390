@_spi(Transports) import CourierCore
import NIOCore
import NIOHTTP1

/// The HTTP/1.1 exchange of a connection opened to switch protocols (a WebSocket's handshake):
/// it reads the answer to the request written on the connection, and
/// - on `101 Switching Protocols`, once the head is complete, takes the HTTP handlers out of the
///   pipeline and wraps the channel for the new protocol (bytes both ways, with backpressure);
///   the bytes the server sent right behind the `101` (the decoder's leftovers) pass on to it;
/// - on any other answer, gathers its body (up to ``refusalLimit`` bytes; more is cut and the
///   connection closed) and hands it over, so the exchange and the caller see a refused handshake
///   as a response like any other.
///
/// Everything here runs on the channel's event loop.
final class UpgradeHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// What the handshake came to.
    enum Outcome {
        case switched(HTTPResponseHead, SwitchedConnection, ByteStream)
        case answered(HTTPResponseHead, ByteBuffer?)
    }

    /// The most bytes of a refusal's body kept.
    static let refusalLimit = 1 << 20

    private enum State {
        case awaitingHead
        case awaitingEnd(HTTPResponseHead)
        case gathering(HTTPResponseHead, ByteBuffer?)
        case switched
        case done
    }

    private var state = State.awaitingHead
    private let promise: EventLoopPromise<Outcome>
    private let httpHandlers: [any RemovableChannelHandler]
    private let request: Request
    private let bufferLimit: Int

    /// A handler that answers `promise`; `httpHandlers` (the request encoder and the response
    /// decoder) leave the pipeline when the server switches, and the new protocol's bytes go to a
    /// stream that buffers up to `bufferLimit` of them (failures there name `request`).
    init(promise: EventLoopPromise<Outcome>, httpHandlers: [any RemovableChannelHandler], request: Request, bufferLimit: Int) {
        self.promise = promise
        self.httpHandlers = httpHandlers
        self.request = request
        self.bufferLimit = bufferLimit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .switched = state {
            // The decoder's leftovers, and anything after them: the new protocol's bytes. The
            // leftovers come outside any read cycle of the socket, and the wrapped channel hands
            // on what it holds at a read's completion: it gets one now.
            context.fireChannelRead(data)
            context.fireChannelReadComplete()
            return
        }
        switch (state, unwrapInboundIn(data)) {
        case (.awaitingHead, .head(let head)) where head.status == .switchingProtocols:
            state = .awaitingEnd(head)
        case (.awaitingHead, .head(let head)):
            state = .gathering(head, nil)
        case (.awaitingEnd(let head), .end):
            switchProtocols(context: context, head: head)
        case (.gathering(let head, var body), .body(var piece)):
            let room = Self.refusalLimit - (body?.readableBytes ?? 0)
            if piece.readableBytes > room {
                piece.moveWriterIndex(to: piece.readerIndex + max(0, room))
                body.setOrWriteBuffer(&piece)
                answer(context: context, .answered(head, body))
                return
            }
            body.setOrWriteBuffer(&piece)
            state = .gathering(head, body)
        case (.gathering(let head, let body), .end):
            answer(context: context, .answered(head, body))
        case (.done, _):
            break
        default:
            fail(context: context, NIOTransportError.connectionClosedBeforeResponse)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if case .gathering(let head, let body) = state {
            // A refusal whose body ends with the connection (no length): what arrived is it.
            answer(context: context, .answered(head, body))
        } else {
            fail(context: context, NIOTransportError.connectionClosedBeforeResponse)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case .switched = state {
            context.fireErrorCaught(error)
            return
        }
        fail(context: context, error)
    }

    /// The server switched: a ``SwitchedHandler`` takes the new protocol's bytes (at the end of
    /// the pipeline, after this one), then the HTTP handlers leave, the decoder handing on the
    /// bytes it holds beyond the `101`.
    private func switchProtocols(context: ChannelHandlerContext, head: HTTPResponseHead) {
        state = .switched
        let (stream, continuation) = ByteStream.makeStream(bufferLimit: bufferLimit)
        let handler = SwitchedHandler(continuation: continuation, request: request)
        do {
            try context.pipeline.syncOperations.addHandler(handler)
            for handler in httpHandlers { context.pipeline.syncOperations.removeHandler(handler, promise: nil) }
            let connection = SwitchedConnection(channel: context.channel, handler: NIOLoopBound(handler, eventLoop: context.eventLoop))
            promise.succeed(.switched(head, connection, stream))
        } catch {
            state = .done
            promise.fail(error)
            context.close(promise: nil)
        }
    }

    private func answer(context: ChannelHandlerContext, _ outcome: Outcome) {
        state = .done
        promise.succeed(outcome)
        // The connection carried a handshake that did not switch: never reused.
        context.close(promise: nil)
    }

    private func fail(context: ChannelHandlerContext, _ error: any Error) {
        if case .done = state { return }
        state = .done
        promise.fail(error)
        context.close(promise: nil)
    }
}
