import CourierCore
import NIOCore
import NIOHPACK
import NIOHTTP2

/// Stands before SwiftNIO's HTTP/2-to-HTTP/1 codec on every stream and lets through only heads
/// whose `:status` is three ASCII digits (RFC 9113 §8.3.2). The codec turns the value into
/// `HTTPResponseStatus` with a conversion that traps on a negative number (`:status: -20` stopped
/// the process) and names other bad values by a SwiftNIO type; here each is one typed
/// `badResponse`, and the stream is reset. A three-digit status below 100 goes on, to be refused
/// by ``HTTP1Handler`` as an HTTP/1.1 one is.
final class StatusGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias InboundOut = HTTP2Frame.FramePayload

    private var refused = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .headers(let headers) = unwrapInboundIn(data), let status = headers.headers.first(name: ":status"),
            !Self.isThreeDigits(status)
        {
            refused = true
            context.fireErrorCaught(
                CourierError(.transport(TransportFailure(.badResponse, message: "the response's :status is not a three-digit code"))))
            context.close(promise: nil)
            return
        }
        context.fireChannelRead(data)
    }

    static func isThreeDigits(_ status: String) -> Bool {
        let bytes = status.utf8
        return bytes.count == 3 && bytes.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
