import AsyncHTTPClient
import CourierCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// AsyncHTTPClient's and SwiftNIO's errors as Courier's causes: transient where a retry may
/// succeed (a connection refused, reset or closed mid-body), permanent where it cannot (TLS, an
/// invalid request). Messages name the failure, never a header value or a URL.
enum TransportErrors {
    /// `error` as a ``CourierError`` with `request` attached; `duringBody` when it ended a body
    /// already under way (an HTTP/2 stream reset is then a truncated body).
    static func courierError(for error: any Error, request: Request, duringBody: Bool = false) -> CourierError {
        switch error {
        case let error as NIOHTTP2Errors.StreamClosed:
            return CourierError(.transport(streamClosed(error.errorCode, duringBody: duringBody)), request: request, underlyingError: error)
        case let error as CourierError:
            return error.request == nil ? CourierError(error.cause, request: request, underlyingError: error.underlyingError) : error
        case is CancellationError:
            return CourierError(.cancelled, request: request)
        case let error as HTTPClientError:
            return CourierError(cause(for: error, duringBody: duringBody), request: request, underlyingError: error)
        case let error as HTTPParserError:
            let failure: TransportFailure =
                if case .invalidEOFState = error {
                    TransportFailure(.truncatedBody, message: "the connection closed before the body was complete")
                } else {
                    TransportFailure(.badResponse, message: "the response is not valid HTTP (\(error))")
                }
            return CourierError(.transport(failure), request: request, underlyingError: error)
        case let error as NIOConnectionError:
            let kind: TransportFailure.Kind =
                error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil) ? .dnsFailure : .cannotConnect
            return failure(kind, kind == .dnsFailure ? "the host name could not be resolved" : "the connection was refused", error, request)
        case let error as ChannelError:
            switch error {
            case .connectTimeout: return CourierError(.timedOut, request: request, underlyingError: error)
            case .ioOnClosedChannel, .eof, .alreadyClosed, .outputClosed, .inputClosed:
                return failure(.connectionLost, "the connection was closed (\(error))", error, request)
            default: return failure(.other, "SwiftNIO: \(error)", error, request)
            }
        case let error as IOError:
            switch error.errnoCode {
            case ECONNREFUSED: return failure(.cannotConnect, "the connection was refused", error, request)
            case ECONNRESET, EPIPE, ECONNABORTED: return failure(.connectionLost, "the connection was reset", error, request)
            case ENETUNREACH, EHOSTUNREACH: return failure(.notConnected, "the network is unreachable", error, request)
            default: return failure(.other, "I/O error \(error.errnoCode)", error, request)
            }
        case let error as NIOSSLError:
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
    static func streamClosed(_ code: HTTP2ErrorCode, duringBody: Bool) -> TransportFailure {
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

    private static func tls(_ problem: TLSProblem, _ error: any Error, _ request: Request) -> CourierError {
        CourierError(.transport(.tls(problem)), request: request, underlyingError: error)
    }

    /// What SwiftNIO SSL's error says failed: a handshake's BoringSSL reason, or the error's own
    /// case name (never its associated values, which may hold a path).
    static func problem(for error: NIOSSLError) -> TLSProblem {
        switch error {
        case .handshakeFailed(let inner): problem(for: inner)
        case .uncleanShutdown: .handshake("the connection closed without a TLS close_notify")
        default: .handshake(String(String(describing: error).prefix(while: { $0 != "(" })))
        }
    }

    /// The first BoringSSL reason name in `error` (`CERTIFICATE_VERIFY_FAILED`,
    /// `TLSV1_ALERT_CERTIFICATE_REQUIRED`, …) as a problem.
    static func problem(for error: BoringSSLError) -> TLSProblem {
        let text = String(describing: error)
        // "error:1000007d:SSL routines:OPENSSL_internal:CERTIFICATE_VERIFY_FAILED at …/handshake.cc:320"
        if let marker = text.range(of: "OPENSSL_internal:") {
            let reason = text[marker.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            if !reason.isEmpty { return TLSProblem.fromBoringSSL(reason: String(reason)) }
        }
        return .handshake(String(text.prefix(while: { $0 != "(" })))
    }

    private static func failure(_ kind: TransportFailure.Kind, _ message: String, _ error: any Error, _ request: Request) -> CourierError {
        CourierError(.transport(TransportFailure(kind, message: message)), request: request, underlyingError: error)
    }

    private static func cause(for error: HTTPClientError, duringBody: Bool) -> CourierError.Cause {
        switch error {
        case .cancelled, .requestStreamCancelled: return .cancelled
        case .readTimeout, .writeTimeout, .connectTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout: return .timedOut
        case .remoteConnectionClosed where duringBody:
            return .transport(TransportFailure(.truncatedBody, message: "the connection closed before the response was complete"))
        case .remoteConnectionClosed:
            // Before the head: no answer at all (a kept-alive connection the server dropped as
            // it was reused, typically), which the exchange may send again; not a cut body.
            return .transport(TransportFailure(.connectionLost, message: "the connection closed before the response arrived"))
        case .bodyLengthMismatch:
            return .transport(TransportFailure(.other, message: "the request body's length differs from the length it declared"))
        case .tlsHandshakeTimeout:
            return .transport(TransportFailure(.secureConnectionFailed, message: "the TLS handshake timed out"))
        case .invalidURL, .emptyHost, .emptyScheme:
            return .transport(TransportFailure(.other, message: "AsyncHTTPClient refused the URL (\(error.shortDescription))"))
        default:
            // The short description carries no associated values (no header values, no URL).
            return .transport(TransportFailure(.other, message: "AsyncHTTPClient: \(error.shortDescription)"))
        }
    }
}
