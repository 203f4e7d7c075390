import AsyncHTTPClient
import CourierCore
@_spi(NIOTransports) import CourierNIOSupport
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// AsyncHTTPClient's errors (and, through CourierNIO's mapping, SwiftNIO's) as Courier's causes: transient where a retry may
/// succeed (a connection refused, reset or closed mid-body), permanent where it cannot (TLS, an
/// invalid request). Messages name the failure, never a header value or a URL.
enum TransportErrors {
    /// `error` as a ``CourierError`` with `request` attached; `duringBody` when it ended a body
    /// already under way (an HTTP/2 stream reset, mapped by CourierNIO, is then a truncated body).
    static func courierError(for error: any Error, request: Request, duringBody: Bool = false) -> CourierError {
        switch error {
        case let error as HTTPClientError:
            var mapped = CourierError(cause(for: error, duringBody: duringBody), request: request, underlyingError: error)
            mapped.timeout = timeout(for: error)
            return mapped
        default:
            // SwiftNIO's own errors (connections, parsing, TLS) as Courier's own transport maps them.
            return NIOErrors.courierError(for: error, request: request, duringBody: duringBody)
        }
    }

    /// Which of AsyncHTTPClient's limits a timeout was (it does not say how long it was).
    private static func timeout(for error: HTTPClientError) -> CourierError.Timeout? {
        switch error {
        case .readTimeout, .writeTimeout: CourierError.Timeout(.idle, limit: nil)
        case .connectTimeout: CourierError.Timeout(.connect, limit: nil)
        case .deadlineExceeded: CourierError.Timeout(.deadline, limit: nil)
        case .getConnectionFromPoolTimeout: CourierError.Timeout(.poolWait, limit: nil)
        default: nil
        }
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
