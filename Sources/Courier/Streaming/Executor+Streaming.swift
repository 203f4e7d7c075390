import Foundation

extension Executor {
    /// Buffers the response with ``execute(_:)`` and hands its body over as one chunk.
    public func executeStream(_ request: Request, options: StreamOptions) async throws -> StreamedResponse {
        StreamedResponse(try await execute(request))
    }

    /// Sends a request and returns as soon as the status and headers arrive; the body follows as
    /// a ``ByteStream`` of chunks, in bounded memory whatever its size.
    ///
    /// The request is validated first; an invalid one is never sent. Middleware applies (see
    /// ``Middleware/interceptStream(_:next:)``): retries and credential refresh happen before the
    /// first body byte, never after. The request's ``Request/deadline`` bounds the whole
    /// exchange, body included: when it passes, reading throws ``CourierError/Cause/timedOut``
    /// and the transfer stops. Any status is returned; check it, or use
    /// ``StreamedResponse/validated(_:)``.
    ///
    /// ```swift
    /// let response = try await executor.stream(.get |> url("https://example.com/log"))
    /// for try await line in response.body.lines { print(line) }
    /// ```
    /// - Parameters:
    ///   - request: The request.
    ///   - options: The buffer limit and upload progress.
    /// - Returns: The response head and its body stream.
    /// - Throws: ``CourierError`` for an invalid request, a failure or timeout before the head,
    ///   or cancellation.
    public func stream(_ request: Request, options: StreamOptions = StreamOptions()) async throws(CourierError) -> StreamedResponse {
        try request.validate()
        if Task.isCancelled { throw CourierError(.cancelled, request: request) }
        do {
            guard let deadline = request.effectiveDeadline else {
                var response = try await executeStream(request, options: options)
                response.request = request
                return response
            }
            let clock = ContinuousClock()
            let start = clock.now
            var response = try await withDeadline(.seconds(deadline), request: request) {
                try await executeStream(request, options: options)
            }
            response.request = request
            return response.endingBody(at: start.advanced(by: .seconds(deadline)), clock: clock, request: request)
        } catch {
            throw CourierError.wrapping(error, request: request)
        }
    }
}

extension StreamedResponse {
    /// This response, with its body stopped with ``CourierError/Cause/timedOut`` at `deadline`.
    func endingBody(at deadline: ContinuousClock.Instant, clock: ContinuousClock, request: Request) -> StreamedResponse {
        let channel = body.channel
        let timedOut = CourierError(.timedOut, request: request)
        let timer = Task {
            try await clock.sleep(until: deadline)
            channel.terminate(timedOut)
        }
        var copy = self
        copy.body = body.observing(chunk: { _ in }, end: { _ in timer.cancel() })
        return copy
    }
}

extension Middleware {
    /// Runs ``intercept(_:next:)`` on the head of the stream; see the requirement.
    public func interceptStream(_ request: Request, next: StreamNext) async throws -> StreamedResponse {
        try await HeadAdapter.run(self, request, next)
    }
}

/// Runs a buffered-response middleware around a stream: the middleware sees each attempt's head
/// (with an empty body); the stream of the attempt whose head it returns is handed back.
enum HeadAdapter {
    static func run(
        _ middleware: some Middleware, _ request: Request, _ next: Middleware.StreamNext
    ) async throws -> StreamedResponse {
        let latest = Locked<StreamedResponse?>(nil)
        let head: Response
        do {
            head = try await middleware.intercept(request) { request in
                let streamed = try await next(request)
                // A retry supersedes the attempt before it: stop that transfer.
                latest.withLock { $0.replace(with: streamed) }?.body.cancel()
                return streamed.head
            }
        } catch {
            latest.withLock { $0.take() }?.body.cancel()
            throw error
        }
        let stream = latest.withLock { $0.take() }
        if let stream, head.body.isEmpty, head.status == stream.status {
            return StreamedResponse(status: head.status, headers: head.headers, url: head.url, body: stream.body)
        }
        // The middleware answered with a response of its own (a cache, a stub): stream that.
        stream?.body.cancel()
        return StreamedResponse(head)
    }
}

extension Optional {
    /// Stores `value`, returning what was there.
    fileprivate mutating func replace(with value: Wrapped) -> Wrapped? {
        defer { self = value }
        return self
    }

    /// The value, leaving `nil` behind.
    fileprivate mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
