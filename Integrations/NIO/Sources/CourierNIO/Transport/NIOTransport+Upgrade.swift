@_spi(Transports) import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationEssentialsCompat
import NIOHTTP1

/// A hop may switch its connection to another protocol (a WebSocket's handshake): see
/// ``/Courier/HTTPUpgrade``.
extension NIOTransport: UpgradesConnections {}

extension NIOTransport {
    /// Sends a hop that asks to switch protocols, on a connection of its own (the route's
    /// proxies, TLS and pins, HTTP/1.1 only, never pooled): with `Connection: Upgrade` and
    /// `Upgrade:`, and no `Accept-Encoding` the caller did not set. A `101` hands the connection
    /// over (its bytes as the response's body); any other answer comes back with its body in hand
    /// and the connection closed.
    func switching(
        _ request: Request, to upgrade: HTTPUpgrade, head: HTTPRequestHead, body: ByteBuffer?, upload: FramedBody?, target: RequestTarget,
        url: String, options: StreamOptions
    ) async throws -> StreamedResponse {
        guard upload == nil else {
            throw CourierError(
                .invalidRequest([RequestProblem(.invalidFraming, "a request that switches protocols cannot stream its body")]),
                request: request)
        }
        var head = head
        head.headers.replaceOrAdd(name: "Connection", value: "Upgrade")
        head.headers.replaceOrAdd(name: "Upgrade", value: upgrade.protocolName)
        if request.headers["Accept-Encoding"] == nil { head.headers.remove(name: "Accept-Encoding") }
        let channel: any Channel
        do {
            channel = try await connector.connectForUpgrade(to: target.origin, timings: options.timings).get()
        } catch {
            throw Self.lost(TransportErrors.courierError(for: error, request: request), reused: false)
        }
        if let timings = options.timings { Self.record(channel, isNew: true, protocol: "http/1.1", in: timings) }
        let key = ObjectIdentifier(channel)
        switchedChannels.withLockedValue { $0[key] = channel }
        channel.closeFuture.whenComplete { [switchedChannels] _ in switchedChannels.withLockedValue { _ = $0.removeValue(forKey: key) } }
        let promise = channel.eventLoop.makePromise(of: UpgradeHandler.Outcome.self)
        let request = request
        channel.eventLoop.execute { [head] in
            do {
                let encoder = HTTPRequestEncoder()
                let decoder = ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .forwardBytes, informationalResponseStrategy: .drop))
                let pipeline = channel.pipeline.syncOperations
                try pipeline.addHandler(encoder)
                try pipeline.addHandler(decoder)
                try pipeline.addHandler(
                    UpgradeHandler(promise: promise, httpHandlers: [encoder, decoder], request: request, bufferLimit: options.bufferLimit))
                channel.write(HTTPClientRequestPart.head(head), promise: nil)
                if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
                channel.writeAndFlush(HTTPClientRequestPart.end(nil), promise: nil)
            } catch {
                promise.fail(error)
                channel.close(promise: nil)
            }
        }
        let outcome: UpgradeHandler.Outcome
        do {
            outcome = try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                channel.close(promise: nil)
            }
        } catch {
            channel.close(promise: nil)
            if Task.isCancelled { throw CourierError(.cancelled, request: request) }
            throw Self.lost(TransportErrors.courierError(for: error, request: request), reused: false)
        }
        switch outcome {
        case .answered(let answer, let body):
            let data = body.map { Data(buffer: $0) } ?? Data()
            return StreamedResponse(head: Self.response(answer, url: url), body: ByteStream(data))
        case .switched(let answer, let connection, let stream):
            // The new protocol's read loop runs on the connection's event loop, where its bytes
            // arrive: no thread hand-off per read.
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
                upgrade.accept(connection, readingOn: EventLoopTaskExecutor(connection.channel.eventLoop))
            } else {
                upgrade.accept(connection)
            }
            return StreamedResponse(head: Self.response(answer, url: url), body: stream)
        }
    }
}
