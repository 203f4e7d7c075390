#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension CourierError {
    /// Maps any error from a transport or middleware to a `CourierError`.
    ///
    /// `CourierError` passes through (gaining the request if it had none); `CancellationError`
    /// and `URLError.cancelled` become ``Cause/cancelled`` (or ``Cause/timedOut`` inside an
    /// attempt whose ``AttemptTimeoutMiddleware`` or ``RetryPolicy/attemptTimeout`` ran out: the
    /// cancellation that stopped it); `URLError.timedOut` becomes
    /// ``Cause/timedOut``; other `URLError`s become ``Cause/transport(_:)`` with a platform-neutral
    /// kind; a ``RequestProblem`` becomes ``Cause/invalidRequest(_:)``. (`URLError`s are read by
    /// the URLSession transport's module, linked with `import Courier`: the core alone builds on
    /// FoundationEssentials, which has no `URLError`.)
    /// - Parameters:
    ///   - error: The error to map.
    ///   - request: The request it belongs to.
    /// - Returns: The mapped error.
    public static func wrapping(_ error: any Error, request: Request?) -> CourierError {
        switch error {
        case var error as CourierError:
            if case .cancelled = error.cause, !error.isReaderStop, let timeout = AttemptExpiry.timeoutForCancellation {
                error.cause = .timedOut
                error.timeout = timeout
            }
            return error.about(request)
        case is CancellationError:
            // The cancellation that stops an attempt whose time ran out is that timeout.
            if let timeout = AttemptExpiry.timeoutForCancellation { return .timedOut(timeout, request: request) }
            return CourierError(.cancelled, request: request)
        case let problem as RequestProblem:
            return CourierError(.invalidRequest([problem]), request: request)
        default:
            let cause = (error as? any PlatformError)?.courierCause ?? .transport(TransportFailure(.other, message: "\(type(of: error))"))
            var wrapped = CourierError(cause, request: request, underlyingError: error)
            switch cause {
            case .cancelled:
                if let timeout = AttemptExpiry.timeoutForCancellation {
                    wrapped.cause = .timedOut
                    wrapped.timeout = timeout
                }
            case .timedOut:
                // The platform's own limit (URLSession's request or resource timeout), which it
                // does not name.
                wrapped.timeout = CourierError.Timeout(.unspecified, limit: nil)
            default:
                break
            }
            return wrapped
        }
    }
}

extension CourierError {
    /// This error with `request` as its context (redacted) when it has none yet: context added,
    /// not a mapping.
    package func about(_ request: Request?) -> CourierError {
        guard self.request == nil, let request else { return self }
        var error = self
        error.request = request.redacted()
        error.echoGuard = BodyRedactor(request: request)
        return error
    }
}

extension CourierError {
    /// Any error as a `CourierError`: the same error when it is one, otherwise mapped as
    /// ``wrapping(_:request:)`` maps transport errors (cancellation, timeouts, `URLError`s).
    ///
    /// For a `catch` whose error is `any Error`, for example inside `Task { }`:
    ///
    /// ```swift
    /// Task {
    ///     do { try await load() } catch {
    ///         if case .unacceptableStatus(404, _) = CourierError(error).cause { showNotFound() }
    ///     }
    /// }
    /// ```
    /// - Parameter error: Any error.
    public init(_ error: any Error) {
        self = .wrapping(error, request: nil)
    }
}

extension Error {
    /// This error as a ``CourierError``, or `nil` when it is another kind of error:
    /// `error.courier?.cause` in a `catch` whose error is `any Error`.
    public var courier: CourierError? { self as? CourierError }
}
