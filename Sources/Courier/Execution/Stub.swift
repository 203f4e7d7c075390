import Foundation

/// A canned answer for ``InMemoryExecutor``: a response or a transport failure, optionally delayed.
///
/// ```swift
/// .json([User(id: 1, name: "Ada")])
/// .status(404, body: Data(#"{"error":"no such user"}"#.utf8))
/// .failure(URLError(.notConnectedToInternet))
/// .text("slow").delayed(by: .seconds(2))
/// ```
public struct Stub: Sendable {
    /// What the stub produces.
    public enum Outcome: Sendable {
        /// Answer with this response.
        case response(Response)
        /// Fail with this error, as a transport would.
        case failure(any Error)
    }

    /// What the stub produces.
    public var outcome: Outcome
    /// How long to wait before answering; the wait ends early with cancellation.
    public var delay: Duration?

    /// Creates a stub.
    /// - Parameters:
    ///   - outcome: The response or failure.
    ///   - delay: How long to wait first.
    public init(_ outcome: Outcome, delay: Duration? = nil) {
        self.outcome = outcome
        self.delay = delay
    }

    /// A response with any status, headers and body.
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The headers.
    ///   - body: The body.
    /// - Returns: The stub.
    public static func status(_ status: Int, headers: HTTPHeaders = [:], body: Data = Data()) -> Stub {
        Stub(.response(Response(status: status, headers: headers, body: body)))
    }

    /// A JSON response with `Content-Type: application/json`. A value that fails to encode makes a
    /// stub that fails with the `EncodingError`.
    /// - Parameters:
    ///   - value: The body value.
    ///   - status: The status code; 200 by default.
    ///   - headers: Extra headers.
    ///   - encoder: The JSON encoder.
    /// - Returns: The stub.
    public static func json(
        _ value: some Encodable, status: Int = 200, headers: HTTPHeaders = [:], encoder: JSONEncoder = JSONEncoder()
    ) -> Stub {
        do {
            var headers = headers
            if !headers.contains(.contentType) { headers.set(.contentType, MediaType.json.rawValue) }
            return Stub(.response(Response(status: status, headers: headers, body: try encoder.encode(value))))
        } catch {
            return Stub(.failure(error))
        }
    }

    /// A UTF-8 text response.
    /// - Parameters:
    ///   - text: The body.
    ///   - status: The status code; 200 by default.
    ///   - contentType: The media type; `text/plain; charset=utf-8` by default.
    /// - Returns: The stub.
    public static func text(_ text: String, status: Int = 200, contentType: MediaType = .plainText) -> Stub {
        Stub(.response(Response(status: status, headers: [.contentType: contentType.rawValue], body: Data(text.utf8))))
    }

    /// A transport failure, for example `URLError(.timedOut)`.
    /// - Parameter error: The error the executor throws.
    /// - Returns: The stub.
    public static func failure(_ error: any Error) -> Stub {
        Stub(.failure(error))
    }

    /// The same stub, answered after `delay`.
    /// - Parameter delay: How long to wait.
    /// - Returns: The delayed stub.
    public func delayed(by delay: Duration) -> Stub {
        var copy = self
        copy.delay = delay
        return copy
    }
}
