import AsyncHTTPClient
import Courier
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

@testable import CourierAsyncHTTPClient

/// AsyncHTTPClient's and SwiftNIO's errors as Courier's causes: transient exactly where a retry
/// may succeed, and never with a header value or URL in the message.
@Suite("AsyncHTTPClientExecutor: error mapping")
struct TransportErrorsTests {
    static let request = Request.get |> url("https://api.test/items?token=s3cr3t") |> bearer("t0ken-value")

    static func mapped(_ error: any Error) -> CourierError { TransportErrors.courierError(for: error, request: request) }

    @Test func aConnectionClosedMidBodyIsATransientTruncation() {
        for error in [HTTPClientError.remoteConnectionClosed, HTTPParserError.invalidEOFState] as [any Error] {
            let mapped = TransportErrors.courierError(for: error, request: Self.request, duringBody: true)
            guard case .transport(let failure) = mapped.cause else { Issue.record("\(mapped)"); continue }
            #expect(failure.kind == .truncatedBody)
            #expect(mapped.isTransient)
        }
    }

    @Test func aConnectionClosedBeforeTheHeadIsALostConnectionNotACutBody() {
        // No byte of an answer: the exchange may send an idempotent request again.
        let mapped = Self.mapped(HTTPClientError.remoteConnectionClosed)
        guard case .transport(let failure) = mapped.cause else { Issue.record("\(mapped)"); return }
        #expect(failure.kind == .connectionLost)
        #expect(mapped.isTransient)
    }

    @Test func refusedAndResetConnectionsAreTransient() {
        let cases: [(any Error, TransportFailure.Kind)] = [
            (IOError(errnoCode: ECONNREFUSED, reason: "connect"), .cannotConnect),
            (IOError(errnoCode: ECONNRESET, reason: "read"), .connectionLost),
            (ChannelError.ioOnClosedChannel, .connectionLost),
            (ChannelError.eof, .connectionLost),
        ]
        for (error, kind) in cases {
            let mapped = Self.mapped(error)
            guard case .transport(let failure) = mapped.cause else { Issue.record("\(mapped)"); continue }
            #expect(failure.kind == kind, "\(error)")
            #expect(mapped.isTransient, "\(error)")
        }
    }

    @Test func timeoutsAndCancellationKeepTheirMeaning() {
        for error in [HTTPClientError.readTimeout, .connectTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout] {
            guard case .timedOut = Self.mapped(error).cause else { Issue.record("\(error)"); continue }
        }
        guard case .cancelled = Self.mapped(HTTPClientError.cancelled).cause else { Issue.record("cancelled"); return }
        guard case .cancelled = Self.mapped(CancellationError()).cause else { Issue.record("CancellationError"); return }
    }

    @Test func tlsAndMalformedResponsesAreNotRetried() {
        struct NIOSSLError: Error {}
        let tls = Self.mapped(NIOSSLError())
        guard case .transport(let failure) = tls.cause else { Issue.record("\(tls)"); return }
        #expect(failure.kind == .secureConnectionFailed)
        #expect(!tls.isTransient)
        let garbage = Self.mapped(HTTPParserError.invalidCharactersUsed)
        guard case .transport(let bad) = garbage.cause else { Issue.record("\(garbage)"); return }
        #expect(bad.kind == .badResponse)
        #expect(!garbage.isTransient)
        #expect(!Self.mapped(HTTPClientError.bodyLengthMismatch).isTransient)
    }

    @Test func messagesCarryNoSecrets() {
        let errors: [any Error] = [
            HTTPClientError.invalidHeaderFieldValues(["Bearer t0ken-value"]), HTTPClientError.invalidURL,
            HTTPClientError.remoteConnectionClosed, IOError(errnoCode: ECONNRESET, reason: "read"),
        ]
        for error in errors {
            let mapped = Self.mapped(error)
            let shown = [String(describing: mapped), String(reflecting: mapped), mapped.localizedDescription].joined(separator: "\n")
            #expect(!shown.contains("t0ken-value"), "\(shown)")
            #expect(!shown.contains("s3cr3t"), "\(shown)")
        }
    }
}
