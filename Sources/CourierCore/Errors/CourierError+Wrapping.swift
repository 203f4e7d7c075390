import Foundation


extension CourierError {
    /// Maps any error from a transport or middleware to a `CourierError`.
    ///
    /// `CourierError` passes through (gaining the request if it had none); `CancellationError`
    /// and `URLError.cancelled` become ``Cause/cancelled``; `URLError.timedOut` becomes
    /// ``Cause/timedOut``; other `URLError`s become ``Cause/transport(_:)`` with a platform-neutral
    /// kind; a ``RequestProblem`` becomes ``Cause/invalidRequest(_:)``.
    /// - Parameters:
    ///   - error: The error to map.
    ///   - request: The request it belongs to.
    /// - Returns: The mapped error.
    public static func wrapping(_ error: any Error, request: Request?) -> CourierError {
        switch error {
        case var error as CourierError:
            if error.request == nil, let request {
                error.request = request.redacted()
                error.echoGuard = BodyRedactor(request: request)
            }
            return error
        case is CancellationError:
            return CourierError(.cancelled, request: request)
        case let problem as RequestProblem:
            return CourierError(.invalidRequest([problem]), request: request)
        case let error as URLError:
            return CourierError(cause(for: error), request: request, underlyingError: error)
        default:
            let message = "\(type(of: error))"
            return CourierError(.transport(TransportFailure(.other, message: message)), request: request, underlyingError: error)
        }
    }

    private static func cause(for error: URLError) -> Cause {
        let code = error.code
        let kind: TransportFailure.Kind
        switch code {
        case .timedOut: return .timedOut
        case .cancelled: return .cancelled
        case .cannotFindHost, .dnsLookupFailed: kind = .dnsFailure
        case .cannotConnectToHost: kind = .cannotConnect
        case .networkConnectionLost: kind = .connectionLost
        case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff: kind = .notConnected
        case .serverCertificateHasBadDate: return .transport(.tls(.expired, code: code.rawValue))
        case .serverCertificateNotYetValid: return .transport(.tls(.notYetValid, code: code.rawValue))
        case .serverCertificateHasUnknownRoot: return .transport(.tls(.unknownIssuer, code: code.rawValue))
        case .serverCertificateUntrusted: return .transport(.tls(.untrustedCertificate, code: code.rawValue))
        case .clientCertificateRejected: return .transport(.tls(.clientCertificateRefused, code: code.rawValue))
        case .clientCertificateRequired: return .transport(.tls(.clientCertificateRequired, code: code.rawValue))
        case .secureConnectionFailed: kind = .secureConnectionFailed
        case .httpTooManyRedirects, .redirectToNonExistentLocation: kind = .redirectFailed
        case .badServerResponse, .cannotParseResponse, .cannotDecodeContentData, .cannotDecodeRawData,
            .zeroByteResource:
            kind = .badResponse
        default:
            kind = .other
        }
        return .transport(TransportFailure(kind, code: code.rawValue, message: "URLError \(describe(code))"))
    }

    private static func describe(_ code: URLError.Code) -> String {
        switch code {
        case .cannotFindHost: "cannotFindHost"
        case .dnsLookupFailed: "dnsLookupFailed"
        case .cannotConnectToHost: "cannotConnectToHost"
        case .networkConnectionLost: "networkConnectionLost"
        case .notConnectedToInternet: "notConnectedToInternet"
        case .secureConnectionFailed: "secureConnectionFailed"
        case .httpTooManyRedirects: "httpTooManyRedirects"
        case .badServerResponse: "badServerResponse"
        case .cannotParseResponse: "cannotParseResponse"
        case .badURL: "badURL"
        case .unsupportedURL: "unsupportedURL"
        default: "code \(code.rawValue)"
        }
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
