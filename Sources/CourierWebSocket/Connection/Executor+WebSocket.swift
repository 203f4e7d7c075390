import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Executor {
    /// Opens a WebSocket (RFC 6455) with `request` as its opening handshake.
    ///
    /// The handshake is a Courier call like any other: validated first (an invalid request is
    /// never sent), through the per-call and per-hop middleware (authentication, cookies,
    /// logging, metrics, retries of the handshake), the redirect policy and the transport's
    /// proxies and TLS settings; the request's ``Request/timeout`` and ``Request/deadline`` bound
    /// the handshake. `ws://` and `wss://` URLs are sent as `http://` and `https://`.
    ///
    /// ```swift
    /// let socket = try await executor.webSocket(
    ///     .get |> url("wss://chat.example/live") |> bearer(token) |> timeout(10),
    ///     options: WebSocketOptions(subprotocols: ["chat.v2"], pingInterval: .seconds(20)))
    /// ```
    /// - Parameters:
    ///   - request: The handshake: a `GET` without a body.
    ///   - options: The subprotocols to offer, the limits and timers.
    ///   - clock: The clock of the pings and the closing handshake: `ContinuousClock` by
    ///     default, a ``ManualClock`` in tests.
    /// - Returns: The open socket.
    /// - Throws: ``CourierError``: ``WebSocketFailure/Kind/unsupportedTransport`` (nothing sent),
    ///   ``WebSocketFailure/Kind/upgradeRefused`` with the response and the start of its body,
    ///   ``WebSocketFailure/Kind/handshakeFailed``, or what any call can fail with.
    public func webSocket(
        _ request: Request, options: WebSocketOptions = WebSocketOptions(), clock: some Clock<Duration> = ContinuousClock()
    ) async throws(CourierError) -> WebSocket {
        try await openWebSocket(request, options: options, clock: clock, handler: nil)
    }

    /// Opens a WebSocket as ``webSocket(_:options:clock:)`` does, with its messages handed to
    /// `onMessage` as they arrive instead of read from ``WebSocket/messages``: the form for
    /// code that answers each message at once and may not suspend, as OkHttp's
    /// `WebSocketListener` or websocket-kit's `onText` take them.
    ///
    /// ```swift
    /// let socket = try await executor.webSocket(.get |> url("wss://feed.example/ticks")) { socket, message in
    ///     guard case .text(let tick) = message else { return }
    ///     try? socket.enqueue(.text("ack \(tick.prefix(16))"))
    /// }
    /// let end = try await socket.closed
    /// ```
    ///
    /// `onMessage` is called one message at a time, in order, where the transport delivers the
    /// connection's bytes (on CourierNIO, the connection's event loop; a large compressed message
    /// is inflated, and handed over, in a task of the socket's): keep it short, and hand long work
    /// to a task of your own, or it holds up the other connections of that loop. Nothing waits
    /// unread, so ``WebSocketOptions/bufferedMessages`` does not apply; ``WebSocket/messages``
    /// hands out no message and ends (or throws) with the socket. Send with
    /// ``WebSocket/enqueue(_:)``, which does not suspend. The socket is passed to each call (the
    /// handler need not capture it); drop the last reference to it, or close it, to end it.
    /// - Parameters:
    ///   - request: The handshake: a `GET` without a body.
    ///   - options: The subprotocols to offer, the limits and timers.
    ///   - clock: The clock of the pings and the closing handshake.
    ///   - onMessage: Called with the socket and each whole message (text checked as UTF-8).
    /// - Returns: The open socket.
    /// - Throws: ``CourierError``, as ``webSocket(_:options:clock:)``.
    public func webSocket(
        _ request: Request, options: WebSocketOptions = WebSocketOptions(), clock: some Clock<Duration> = ContinuousClock(),
        onMessage: @escaping @Sendable (WebSocket, WebSocketMessage) -> Void
    ) async throws(CourierError) -> WebSocket {
        try await openWebSocket(request, options: options, clock: clock, handler: onMessage)
    }

    private func openWebSocket(
        _ request: Request, options: WebSocketOptions, clock: some Clock<Duration>, handler: (@Sendable (WebSocket, WebSocketMessage) -> Void)?
    ) async throws(CourierError) -> WebSocket {
        let handshake = Handshake(subprotocols: options.subprotocols, compression: options.compression)
        let request = handshake.prepare(request)
        try request.validate()
        guard exchange.transport is any UpgradesConnections else {
            throw CourierError(
                .webSocket(WebSocketFailure(.unsupportedTransport, message: "\(type(of: exchange.transport)) cannot open a WebSocket")),
                request: request)
        }
        if Task.isCancelled { throw CourierError(.cancelled, request: request) }
        let upgrade = HTTPUpgrade(protocolName: "websocket")
        let streamOptions = {
            // What may wait unread between the connection and the read loop, besides the
            // messages the socket buffers.
            var options = StreamOptions(bufferLimit: WebSocket.byteBufferLimit)
            options.upgrade = upgrade
            return options
        }()
        let exchange = self.exchange
        let response: StreamedResponse
        if let deadline = request.effectiveDeadline {
            response = try await withDeadline(.seconds(deadline), request: request) { () async throws(CourierError) in
                try await exchange.execute(request, options: streamOptions)
            }
        } else {
            response = try await exchange.execute(request, options: streamOptions)
        }
        guard response.status == 101, let connection = upgrade.connection else {
            upgrade.connection?.close()
            throw await Self.refused(response, request: request)
        }
        let accepted: (subprotocol: String?, compression: NegotiatedCompression?)
        do {
            accepted = try handshake.accept(response.headers)
        } catch {
            connection.close()
            response.body.cancel()
            throw CourierError(.webSocket(error), request: request, response: response.head)
        }
        let readingExecutor: (any Sendable)? =
            if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) { upgrade.readingExecutor } else { nil }
        let engine = SocketEngine(
            connection: connection, options: options, compression: accepted.compression, clock: clock, request: request,
            readingExecutor: readingExecutor, handler: handler)
        let socket = WebSocket(engine: engine, response: response.head, subprotocol: accepted.subprotocol)
        engine.face = socket
        engine.start(reading: response.body)
        return socket
    }

    /// The error of a handshake the server did not accept: its status, headers and the first
    /// 64 KiB of its body.
    private static func refused(_ response: StreamedResponse, request: Request) async -> CourierError {
        var head = response.head
        var body = Data()
        do {
            for try await chunk in response.body {
                body.append(chunk.prefix(max(0, (64 << 10) - body.count)))
                if body.count >= 64 << 10 { break }
            }
        } catch {
            // What arrived is enough to say what happened.
        }
        response.body.cancel()
        head.body = body
        let message =
            response.status == 101
            ? "the server switched protocols but the transport handed over no connection"
            : "the server answered \(response.status) instead of switching to WebSocket (101)"
        return CourierError(.webSocket(WebSocketFailure(.upgradeRefused, message: message)), request: request, response: head)
    }
}
