import CourierCore
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

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
    /// The TLS handshake did not finish within the connect timeout.
    case handshakeTimedOut
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

/// SwiftNIO's and SwiftNIO SSL's errors as Courier's causes (shared with Courier's
/// AsyncHTTPClient transport, SPI `NIOTransports`): transient where a retry may succeed
/// (a connection refused, reset or closed before the answer), permanent where it cannot (TLS, a
/// response that is not HTTP). Messages name the failure, never a header value or a URL.
@_spi(NIOTransports) public enum NIOErrors {
    /// Whether `error` says only that the connection went away.
    public static func isConnectionClosure(_ error: any Error) -> Bool {
        switch error {
        case NIOTransportError.connectionClosedBeforeResponse, NIOTransportError.connectionClosedMidBody: return true
        case let error as ChannelError:
            switch error {
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed, .inputClosed: return true
            default: return false
            }
        case let error as IOError: return [ECONNRESET, EPIPE, ECONNABORTED].contains(error.errnoCode)
        case let error as NIOSSLError: if case .uncleanShutdown = error { return true } else { return false }
        default: return false
        }
    }

    /// `error` as a ``/Courier/CourierError`` with `request` attached; `duringBody` when it ended a
    /// body already under way.
    public static func courierError(for error: any Error, request: Request, duringBody: Bool = false) -> CourierError {
        switch error {
        case let error as CourierError:
            return error.request == nil ? CourierError(error.cause, request: request, underlyingError: error.underlyingError) : error
        case is CancellationError:
            return CourierError(.cancelled, request: request)
        case let error as SOCKS5Failure:
            let kind: TransportFailure.Kind
            switch error {
            case .refused: kind = error.isTargetUnreachable ? .cannotConnect : .other
            case .notSOCKS5: kind = .badResponse
            case .noAcceptableMethod, .credentialsRefused, .tooLong: kind = .other
            }
            return failure(kind, error.description, error, request)
        case let error as NIOHTTP2Errors.StreamClosed:
            return CourierError(.transport(streamClosed(error.errorCode, duringBody: duringBody)), request: request, underlyingError: error)
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
            case .handshakeTimedOut:
                return CourierError(.timedOut, request: request, underlyingError: error)
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
        case let error as HTTPParserError:
            switch error {
            case .invalidEOFState:
                return failure(.truncatedBody, "the connection closed before the body was complete", error, request)
            case .headerOverflow:
                return failure(.badResponse, "the response head is larger than the limit (80 KiB of fields)", error, request)
            default: break
            }
            return failure(.badResponse, "the response is not valid HTTP (\(error))", error, request)
        case let error as NIOConnectionError:
            let kind: TransportFailure.Kind =
                error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil) ? .dnsFailure : .cannotConnect
            return failure(kind, kind == .dnsFailure ? "the host name could not be resolved" : "the connection was refused", error, request)
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return CourierError(.timedOut, request: request, underlyingError: error)
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed, .inputClosed:
                return duringBody
                    ? failure(.truncatedBody, "the connection closed before the response was complete", error, request)
                    : failure(.connectionLost, "the connection was closed (\(error))", error, request)
            default: return failure(.other, "SwiftNIO: \(error)", error, request)
            }
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return failure(.cannotConnect, "the connection was refused", error, request)
            case ECONNRESET, EPIPE, ECONNABORTED:
                return duringBody
                    ? failure(.truncatedBody, "the connection was reset before the response was complete", error, request)
                    : failure(.connectionLost, "the connection was reset", error, request)
            case ENETUNREACH, EHOSTUNREACH: return failure(.notConnected, "the network is unreachable", error, request)
            default: return failure(.other, "I/O error \(error.errnoCode)", error, request)
            }
        case let error as NIOSSLError:
            if case .uncleanShutdown = error, duringBody {
                return failure(.truncatedBody, "the connection closed without a TLS close_notify before the body was complete", error, request)
            }
            return tls(problem(for: error), error, request)
        case let error as BoringSSLError:
            return tls(problem(for: error), error, request)
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return tls(.hostnameMismatch, error, request)
        default:
            let name = String(reflecting: type(of: error))
            if name.contains("SSL") || name.contains("TLS") {
                return tls(.handshake(String(describing: type(of: error))), error, request)
            }
            return failure(.other, name, error, request)
        }
    }

    /// An HTTP/2 stream the server (or a `GOAWAY` it sent) closed: transient, as a lost HTTP/1.1
    /// connection is. A `REFUSED_STREAM` was not processed (RFC 9113 §8.7), which the message says
    /// (a stream a `GOAWAY` left out arrives as `CANCEL`, which a server may also send after it began);
    /// mid-body, any reset is a truncated body.
    public static func streamClosed(_ code: HTTP2ErrorCode, duringBody: Bool) -> TransportFailure {
        let name: String
        switch code {
        case .refusedStream: name = "REFUSED_STREAM"
        case .cancel: name = "CANCEL"
        case .internalError: name = "INTERNAL_ERROR"
        case .protocolError: name = "PROTOCOL_ERROR"
        case .flowControlError: name = "FLOW_CONTROL_ERROR"
        case .streamClosed: name = "STREAM_CLOSED"
        case .enhanceYourCalm: name = "ENHANCE_YOUR_CALM"
        case .noError: name = "NO_ERROR"
        default: name = "error code \(code.networkCode)"
        }
        if duringBody {
            return TransportFailure(.truncatedBody, message: "the server reset the HTTP/2 stream mid-body (\(name))")
        }
        if code == .refusedStream {
            return TransportFailure(
                .connectionLost, message: "the server refused the HTTP/2 stream before answering (\(name)); the request was not processed")
        }
        return TransportFailure(.connectionLost, message: "the server reset the HTTP/2 stream before answering (\(name))")
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

    private static func tls(_ problem: TLSProblem, _ error: any Error, _ request: Request) -> CourierError {
        CourierError(.transport(.tls(problem)), request: request, underlyingError: error)
    }

    /// What SwiftNIO SSL's error says failed: a handshake's BoringSSL reason, or the error's own
    /// case name (never its associated values, which may hold a path).
    public static func problem(for error: NIOSSLError) -> TLSProblem {
        switch error {
        case .handshakeFailed(let inner): problem(for: inner)
        case .uncleanShutdown: .handshake("the connection closed without a TLS close_notify")
        default: .handshake(String(String(describing: error).prefix(while: { $0 != "(" })))
        }
    }

    /// The first BoringSSL reason name in `error` (`CERTIFICATE_VERIFY_FAILED`, …) as a problem.
    public static func problem(for error: BoringSSLError) -> TLSProblem {
        let text = String(describing: error)
        if let marker = text.firstRange(of: "OPENSSL_internal:") {
            let reason = text[marker.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !reason.isEmpty { return TLSProblem.fromBoringSSL(reason: String(reason)) }
        }
        return .handshake(String(text.prefix(while: { $0 != "(" })))
    }

    private static func failure(_ kind: TransportFailure.Kind, _ message: String, _ error: any Error, _ request: Request) -> CourierError {
        CourierError(.transport(TransportFailure(kind, message: message)), request: request, underlyingError: error)
    }
}
