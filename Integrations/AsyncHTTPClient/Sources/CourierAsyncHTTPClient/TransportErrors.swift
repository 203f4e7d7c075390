import AsyncHTTPClient
import CourierCore
@_spi(NIOTransports) import CourierNIO
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// AsyncHTTPClient's errors (and, through CourierNIO's mapping, SwiftNIO's) as Courier's causes: transient where a retry may
/// succeed (a connection refused, reset or closed mid-body), permanent where it cannot (TLS, an
/// invalid request). Messages name the failure, never a header value or a URL.
enum TransportErrors {
    /// `error` as a ``CourierError`` with `request` attached; `duringBody` when it ended a body
    /// already under way (an HTTP/2 stream reset is then a truncated body).
    static func courierError(for error: any Error, request: Request, duringBody: Bool = false) -> CourierError {
        switch error {
        case let error as NIOHTTP2Errors.StreamClosed:
            return CourierError(.transport(streamClosed(error.errorCode, duringBody: duringBody)), request: request, underlyingError: error)
        case let error as HTTPClientError:
            return CourierError(cause(for: error, duringBody: duringBody), request: request, underlyingError: error)
        default:
            // SwiftNIO's own errors (connections, parsing, TLS) as Courier's own transport maps them.
            return NIOErrors.courierError(for: error, request: request, duringBody: duringBody)
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
