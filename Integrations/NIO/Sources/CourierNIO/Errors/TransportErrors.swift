@_spi(NIOTransports) import CourierNIOSupport
import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore

/// Failures this transport names itself.
enum NIOTransportError: Error, Sendable {
    /// The connection closed before any byte of the response: the request may be sent again.
    case connectionClosedBeforeResponse
    /// The connection closed in the middle of the response.
    case connectionClosedMidBody
    /// The transport was shut down.
    case shutDown
    /// An `https` origin without a TLS context (never expected: the transport makes one).
    case noTLSContext
    /// The server's verified certificate holds none of the pinned keys.
    case pinMismatch
    /// BoringSSL refused the peer's certificate for `problem` (read from the certificate it
    /// refused); `underlying` is SwiftNIO SSL's error.
    case certificateRefused(TLSProblem, any Error)
    /// The TLS handshake did not finish within the connect timeout (`limit`).
    case handshakeTimedOut(limit: TimeAmount)
    /// A failure after the response's head, while its body was gathered.
    case duringBody(any Error)
    /// More informational (1xx) heads before the answer than ``InformationalHeads`` allows.
    case tooManyInformationalHeads(InformationalHeads.Excess)
    /// No connection was tried: the origin backs off after this failure (``ConnectionBackoff``)
    /// for another `retryIn`.
    case backingOff(any Error, retryIn: TimeAmount)
    /// The TLS handshake with an `https` proxy failed.
    case proxyTLS(any Error)
}

/// CourierNIO's errors as Courier's causes: its own (``NIOTransportError``, ``SOCKS5Failure``),
/// then SwiftNIO's as `NIOErrors` (CourierNIOSupport) maps them for both of Courier's transports on SwiftNIO.
package enum TransportErrors {
    /// Whether `error` says only that the connection went away.
    static func isConnectionClosure(_ error: any Error) -> Bool {
        switch error {
        case NIOTransportError.connectionClosedBeforeResponse, NIOTransportError.connectionClosedMidBody: true
        default: NIOErrors.isConnectionClosure(error)
        }
    }

    /// `error` as a ``/Courier/CourierError`` with `request` attached; `duringBody` when it ended a
    /// body already under way.
    package static func courierError(for error: any Error, request: Request, duringBody: Bool = false) -> CourierError {
        switch error {
        case let error as NIOTransportError:
            switch error {
            case .connectionClosedBeforeResponse where !duringBody:
                return failure(.connectionLost, "the connection closed before the response arrived", error, request)
            case .connectionClosedBeforeResponse, .connectionClosedMidBody:
                return failure(.truncatedBody, "the connection closed before the response was complete", error, request)
            case .shutDown:
                return failure(.other, "the transport was shut down", error, request)
            case .noTLSContext:
                return failure(.secureConnectionFailed, "no TLS configuration for an https origin", error, request)
            case .pinMismatch:
                return tls(.pinMismatch, error, request)
            case .certificateRefused(let problem, let underlying):
                return tls(problem, underlying, request)
            case .handshakeTimedOut(let limit):
                var timedOut = CourierError(.timedOut, request: request, underlyingError: error)
                timedOut.timeout = CourierError.Timeout(.connect, limit: .nanoseconds(limit.nanoseconds))
                return timedOut
            case .duringBody(let failure):
                return courierError(for: failure, request: request, duringBody: true)
            case .tooManyInformationalHeads(let excess):
                return failure(.badResponse, excess.description, error, request)
            case .proxyTLS(let failure):
                // The same cause as the server's would be, said as the proxy's.
                var mapped = courierError(for: failure, request: request)
                if case .transport(var transportFailure) = mapped.cause {
                    transportFailure.message = "the proxy's TLS: " + transportFailure.message
                    mapped.cause = .transport(transportFailure)
                } else if case .timedOut = mapped.cause {
                    mapped = CourierError(
                        .transport(TransportFailure(.secureConnectionFailed, message: "the proxy's TLS handshake did not finish in time")),
                        request: request, underlyingError: failure)
                }
                return mapped
            case .backingOff(let last, let wait):
                return backingOff(courierError(for: last, request: request), wait: wait, last: last, request: request)
            }
        case let error as SOCKS5Failure:
            let kind: TransportFailure.Kind
            switch error {
            case .refused: kind = error.isTargetUnreachable ? .cannotConnect : .other
            case .notSOCKS5: kind = .badResponse
            case .noAcceptableMethod, .credentialsRefused, .tooLong: kind = .other
            }
            return failure(kind, error.description, error, request)
        default:
            return NIOErrors.courierError(for: error, request: request, duringBody: duringBody)
        }
    }

    /// `last`, the failure an origin backs off after, as the failure of a hop that made no
    /// attempt: the same cause (a transient `cannotConnect` when it was not a transport failure),
    /// its message saying so.
    private static func backingOff(_ mapped: CourierError, wait: TimeAmount, last: any Error, request: Request) -> CourierError {
        let note = "not tried again yet: the origin's last connection failed, and the next attempt waits another "
            + "\(max(1, (wait.nanoseconds + 999_999) / 1_000_000)) ms"
        guard case .transport(var failure) = mapped.cause else {
            return CourierError(
                .transport(TransportFailure(.cannotConnect, message: "the last connection failed (\(mapped.summary)); " + note)),
                request: request, underlyingError: last)
        }
        failure.message += "; " + note
        var error = mapped
        error.cause = .transport(failure)
        return error
    }

    private static func failure(_ kind: TransportFailure.Kind, _ message: String, _ error: any Error, _ request: Request) -> CourierError {
        NIOErrors.failure(kind, message, error, request)
    }

    private static func tls(_ problem: TLSProblem, _ error: any Error, _ request: Request) -> CourierError {
        NIOErrors.tls(problem, error, request)
    }
}
