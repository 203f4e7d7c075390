import CourierCore
import NIOCore
import NIOHTTP1

/// One HTTP/1.1 connection to one origin: a channel whose pipeline ends in an ``HTTP1Handler``.
/// The pool lends it to one hop at a time.
final class HTTP1Connection: Sendable {
    let channel: any Channel
    let handler: NIOLoopBound<HTTP1Handler>
    let origin: Origin
    /// The HTTP proxy requests go to (absolute URL on the request line), for an `http` origin
    /// reached through one.
    let forwardingProxy: NIOTransport.Proxy?

    private init(channel: any Channel, handler: NIOLoopBound<HTTP1Handler>, origin: Origin, forwardingProxy: NIOTransport.Proxy?) {
        self.channel = channel
        self.handler = handler
        self.origin = origin
        self.forwardingProxy = forwardingProxy
    }

    /// Whether the connection may be lent again: open, as far as this thread can tell.
    var isOpen: Bool { channel.isActive }

    /// Closes the connection (a call in flight fails).
    func close() {
        channel.close(promise: nil)
    }

    /// The HTTP/1.1 handlers added to `channel` (after TLS, if any), and the connection over them.
    /// Runs on the channel's event loop.
    static func configure(_ channel: any Channel, origin: Origin, forwardingProxy: NIOTransport.Proxy?) throws -> HTTP1Connection {
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(HTTPRequestEncoder())
        try pipeline.addHandler(
            ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes, informationalResponseStrategy: .forward)))
        let handler = HTTP1Handler()
        try pipeline.addHandler(handler)
        return HTTP1Connection(
            channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop), origin: origin, forwardingProxy: forwardingProxy)
    }
}
