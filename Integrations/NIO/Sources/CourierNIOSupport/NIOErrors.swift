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

/// SwiftNIO's and SwiftNIO SSL's errors as Courier's causes, for Courier's two transports on
/// SwiftNIO (CourierNIO and CourierAsyncHTTPClient, SPI `NIOTransports`), each of which maps its
/// own errors first: transient where a retry may succeed
/// (a connection refused, reset or closed before the answer), permanent where it cannot (TLS, a
/// response that is not HTTP). Messages name the failure, never a header value or a URL.
@_spi(NIOTransports) public enum NIOErrors {
    /// Whether `error` says only that the connection went away.
    public static func isConnectionClosure(_ error: any Error) -> Bool {
        switch error {
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
        case let error as NIOHTTP2Errors.StreamClosed:
            return CourierError(.transport(streamClosed(error.errorCode, duringBody: duringBody)), request: request, underlyingError: error)
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
            case .connectTimeout(let limit):
                var timedOut = CourierError(.timedOut, request: request, underlyingError: error)
                timedOut.timeout = CourierError.Timeout(.connect, limit: .nanoseconds(limit.nanoseconds))
                return timedOut
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
            var failure = TransportFailure(
                .connectionLost, message: "the server refused the HTTP/2 stream before answering (\(name)); the request was not processed")
            failure.requestWasNotProcessed = true
            return failure
        }
        return TransportFailure(.connectionLost, message: "the server reset the HTTP/2 stream before answering (\(name))")
    }

    /// A TLS failure for `problem`, with `request` attached and `error` underneath.
    public static func tls(_ problem: TLSProblem, _ error: any Error, _ request: Request) -> CourierError {
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

    /// A transport failure of `kind` saying `message` (never a header value or a URL), with
    /// `request` attached and `error` underneath.
    public static func failure(_ kind: TransportFailure.Kind, _ message: String, _ error: any Error, _ request: Request) -> CourierError {
        CourierError(.transport(TransportFailure(kind, message: message)), request: request, underlyingError: error)
    }
}
