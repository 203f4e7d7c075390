import CourierCore
import NIOCore

/// Opens a tunnel through an HTTP proxy (RFC 9110 §9.3.6): writes `CONNECT host:port`, reads the
/// proxy's answer head byte by byte (at most 16 KiB, so no proxy can make it grow), and on a 2xx
/// removes itself, leaving a byte stream to the target. Any other answer, or bytes after the head
/// (the target cannot speak before the client), fails the tunnel with a typed reason.
final class TunnelHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The longest answer head accepted.
    static let headLimit = 16 << 10

    let established: EventLoopPromise<Void>
    private let authority: String
    private let authorization: String?
    private var head: [UInt8] = []
    private var done = false

    init(target: Origin, authorization: String?, eventLoop: any EventLoop) {
        self.authority = target.host.contains(":") ? "[\(target.host)]:\(target.port)" : "\(target.host):\(target.port)"
        self.authorization = authorization
        self.established = eventLoop.makePromise()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { sendConnect(context: context) }
    }

    /// A channel that never connected (or went before an answer) fails the tunnel.
    func handlerRemoved(context: ChannelHandlerContext) {
        guard !done else { return }
        done = true
        established.fail(CourierError(.transport(TransportFailure(.cannotConnect, message: "the connection to the proxy was not made"))))
    }

    func channelActive(context: ChannelHandlerContext) {
        sendConnect(context: context)
        context.fireChannelActive()
    }

    private var sent = false

    private func sendConnect(context: ChannelHandlerContext) {
        guard !sent else { return }
        sent = true
        var text = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let authorization { text += "Proxy-Authorization: \(authorization)\r\n" }
        text += "\r\n"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: text)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        var buffer = unwrapInboundIn(data)
        while let byte = buffer.readInteger(as: UInt8.self) {
            head.append(byte)
            if head.count > Self.headLimit {
                return fail(.badResponse, "the proxy's answer to CONNECT is longer than 16 KiB", context: context)
            }
            guard head.count >= 4, head.suffix(4).elementsEqual([13, 10, 13, 10]) else { continue }
            return answered(context: context, trailing: buffer.readableBytes)
        }
    }

    /// Reads the status line of the complete head; `trailing` bytes came after it in the same read.
    private func answered(context: ChannelHandlerContext, trailing: Int) {
        let line = head.prefix { $0 != 13 }
        let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].starts(with: Array("HTTP/1.".utf8)), parts[1].count == 3,
            let status = Int(String(decoding: parts[1], as: UTF8.self))
        else { return fail(.badResponse, "the proxy's answer to CONNECT is not HTTP", context: context) }
        switch status {
        case 200..<300:
            // A tunnel is open: nothing may come through it before the client speaks (a refusal's
            // body, below, is ignored with the connection).
            guard trailing == 0 else { return fail(.badResponse, "the proxy sent bytes after opening the tunnel", context: context) }
            done = true
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            established.succeed(())
        case 407:
            fail(.other, "the proxy requires authentication (407 Proxy Authentication Required)", context: context)
        case 500..<600:
            // tinyproxy answers 500, squid 503, others 502 or 504, when the server is out of reach.
            fail(.cannotConnect, "the proxy could not reach the server (\(status))", context: context)
        default:
            fail(.other, "the proxy refused the tunnel (\(status))", context: context)
        }
    }

    private func fail(_ kind: TransportFailure.Kind, _ message: String, context: ChannelHandlerContext) {
        done = true
        established.fail(CourierError(.transport(TransportFailure(kind, message: message))))
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            established.fail(error)
        }
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            established.fail(CourierError(.transport(TransportFailure(.cannotConnect, message: "the proxy closed the connection before answering CONNECT"))))
        }
        context.fireChannelInactive()
    }
}
