#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Executor {
    /// Sends a request and returns as soon as the status and headers arrive; the body follows as
    /// a ``ByteStream`` of chunks, in bounded memory whatever its size.
    ///
    /// The request is validated first; an invalid one is never sent. Middleware applies: retries and credential refresh happen before the first body
    /// byte, never after. The request's ``Request/deadline`` bounds the whole
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
        // Upload progress ends here, once for every transport, however the call ends: with the
        // head, a failure before it, cancellation or the deadline.
        defer { options.uploadProgress?.finish() }
        try request.validate()
        if Task.isCancelled { throw CourierError(.cancelled, request: request) }
        let options = options.validated
        // The exchange's errors arrive mapped, with the request: nothing to map here.
        guard let deadline = request.effectiveDeadline else {
            var response = try await exchange.execute(request, options: options)
            response.request = request
            return response
        }
        let clock = ContinuousClock()
        let start = clock.now
        let exchange = self.exchange
        var response = try await withDeadline(.seconds(deadline), request: request) { () async throws(CourierError) in
            try await exchange.execute(request, options: options)
        }
        response.request = request
        if response.body.bufferedData != nil { return response }
        return response.endingBody(at: start.advanced(by: .seconds(deadline)), limit: .seconds(deadline), clock: clock, request: request)
    }
}

extension StreamedResponse {
    /// This response, with its body stopped with ``CourierError/Cause/timedOut`` at `deadline`.
    func endingBody(at deadline: ContinuousClock.Instant, limit: Duration, clock: ContinuousClock, request: Request) -> StreamedResponse {
        // Holds the transfer, not the stream: dropping the stream still stops it at once.
        let stop = body.stopper
        let timedOut = CourierError.timedOut(.init(.deadline, limit: limit), request: request)
        let timer = Task {
            try await clock.sleep(until: deadline)
            stop(timedOut)
        }
        var copy = self
        copy.body = body.observing(chunk: { _ in }, end: { _ in timer.cancel() })
        return copy
    }
}
