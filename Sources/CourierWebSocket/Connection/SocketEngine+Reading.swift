import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension SocketEngine {
    /// The read loop: frames out of the connection's bytes, messages into ``buffer`` (waiting
    /// while it is full, so a slow reader slows the socket), pings answered, pongs matched, the
    /// peer's close answered; a frame that breaks the rules closes with its code and fails the
    /// socket.
    func read(_ inbound: ByteStream) async {
        var parser = FrameParser(role: .client, maximumFrameSize: options.maximumMessageSize, allowsCompression: compression != nil)
        var assembler = MessageAssembler(maximumMessageSize: options.maximumMessageSize, compression: compression)
        var iterator = inbound.makeAsyncIterator()
        while true {
            let chunk: Data?
            do {
                chunk = try await iterator.next()
            } catch {
                if !isEnded { end(.failure(Task.isCancelled ? cancelled() : lost("the connection failed", underlying: error))) }
                return
            }
            guard let chunk else {
                end(.failure(lost("the connection ended without a close frame")))
                return
            }
            parser.append(chunk)
            do throws(WebSocketFailure) {
                while let frame = try parser.next() {
                    let event: MessageAssembler.Event?
                    if assembler.inflates(frame, atLeast: Self.offLoopInflation), #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *),
                        readingExecutor != nil
                    {
                        // A large compressed message is inflated off the transport's loop, where
                        // the read loop runs: it would hold up the loop's other connections.
                        event = try await withTaskExecutorPreference(globalConcurrentExecutor) { () async throws(WebSocketFailure) in
                            try assembler.take(frame)
                        }
                    } else {
                        event = try assembler.take(frame)
                    }
                    guard let event else { continue }
                    guard await handle(event) else { return }
                }
            } catch {
                await fail(error)
                return
            }
        }
    }

    /// The compressed size from which a message is inflated on the global concurrent executor
    /// rather than on the loop that reads the connection.
    static let offLoopInflation = 64 << 10

    /// Acts on one event; `false` when the socket is over and reading stops.
    private func handle(_ event: MessageAssembler.Event) async -> Bool {
        switch event {
        case .message(let message):
            // After this end's close frame nothing more is handed out; a reader that stopped
            // (the buffer ended but the socket did not) leaves the loop reading for the close.
            if state.withLock({ $0.closeSent }) { return true }
            if await !buffer.push(message) { return !isEnded }
            return true
        case .ping(let payload):
            try? await write(WebSocketFrame(.pong, payload: payload))
            return !isEnded
        case .pong(let payload):
            received(pong: payload)
            return true
        case .close(let code, let reason):
            let (reply, first) = state.withLock { state in
                if state.firstClose == nil { state.firstClose = WebSocketClose(initiator: .server, code: code, reason: reason) }
                return (!state.closeSent, state.firstClose ?? WebSocketClose(initiator: .server, code: code, reason: reason))
            }
            if reply {
                // The answer echoes the peer's code (RFC 6455 §5.5.1), or carries none if it had none.
                try? await write(WebSocketFrame(.close, payload: Self.closePayload(code, ""))) { state in
                    defer { state.closeSent = true }
                    return !state.closeSent
                }
            }
            end(.success(first))
            return false
        }
    }

    /// The peer broke the rules: close with the failure's code (waiting at most the close
    /// timeout for the frame to go out), then end with the failure.
    private func fail(_ failure: WebSocketFailure) async {
        let error = CourierError(.webSocket(failure), request: request)
        if let code = failure.closeCode, code.mayBeSent {
            let timer = Task { [clock, options] in
                do {
                    try await sleep(on: clock, for: options.closeTimeout, as: .webSocketClose)
                } catch {
                    return
                }
                self.end(.failure(error))
            }
            adopt(timer)
            try? await write(WebSocketFrame(.close, payload: Self.closePayload(code, ""))) { state in
                defer { state.closeSent = true }
                return !state.closeSent
            }
            timer.cancel()
        }
        end(.failure(error))
    }
}
