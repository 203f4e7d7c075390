import AsyncHTTPClient
import CourierCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// AsyncHTTPClient's and SwiftNIO's errors as Courier's causes: transient where a retry may
/// succeed (a connection refused, reset or closed mid-body), permanent where it cannot (TLS, an
/// invalid request). Messages name the failure, never a header value or a URL.
enum TransportErrors {
    static func courierError(for error: any Error, request: Request) -> CourierError {
        switch error {
        case let error as CourierError:
            return error.request == nil ? CourierError(error.cause, request: request, underlyingError: error.underlyingError) : error
        case is CancellationError:
            return CourierError(.cancelled, request: request)
        case let error as HTTPClientError:
            return CourierError(cause(for: error), request: request, underlyingError: error)
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
        default:
            let name = String(reflecting: type(of: error))
            if name.contains("SSL") || name.contains("TLS") {
                return failure(.secureConnectionFailed, "the TLS connection failed (\(name))", error, request)
            }
            return failure(.other, name, error, request)
        }
    }

    private static func failure(_ kind: TransportFailure.Kind, _ message: String, _ error: any Error, _ request: Request) -> CourierError {
        CourierError(.transport(TransportFailure(kind, message: message)), request: request, underlyingError: error)
    }

    private static func cause(for error: HTTPClientError) -> CourierError.Cause {
        switch error {
        case .cancelled, .requestStreamCancelled: return .cancelled
        case .readTimeout, .writeTimeout, .connectTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout: return .timedOut
        case .remoteConnectionClosed:
            return .transport(TransportFailure(.truncatedBody, message: "the connection closed before the response was complete"))
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
