import Courier
@_exported import TestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The local httpbin the test script started. Missing configuration fails the test: these tests
/// never skip, so a run without a server cannot pass by accident.
enum HTTPBin {
    static func url(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(
            ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL"],
            "COURIER_HTTPBIN_URL is not set: run the integration tests with scripts/test, which starts httpbin",
            sourceLocation: sourceLocation)
    }

    /// The second httpbin, on another origin (`localhost` and another port).
    static func secondURL(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(
            ProcessInfo.processInfo.environment["COURIER_HTTPBIN_URL_2"],
            "COURIER_HTTPBIN_URL_2 is not set: run the integration tests with scripts/test, which starts httpbin",
            sourceLocation: sourceLocation)
    }

    /// A request against the local httpbin.
    static func request(_ method: Request = .get, sourceLocation: SourceLocation = #_sourceLocation) throws -> Request {
        method |> baseURL(try url(sourceLocation: sourceLocation))
    }

    /// An executor with its own ephemeral session, so tests do not share cookies or caches.
    static func executor() -> URLSessionExecutor {
        URLSessionExecutor(configuration: .ephemeral)
    }
}

/// What httpbin's `/anything` echoes back.
struct Echo: Decodable, Sendable {
    var args: [String: Arg]
    var form: [String: Arg]
    var headers: [String: String]
    var json: JSONValue?
    var data: String
    var method: String
    var url: String
}

/// A query or form value, which httpbin gives as a string or, for repeated names, a list.
enum Arg: Decodable, Sendable, Equatable {
    case one(String)
    case many([String])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(String.self) { self = .one(value) } else {
            self = .many(try container.decode([String].self))
        }
    }
}

/// Any JSON value, for comparing echoed bodies.
enum JSONValue: Decodable, Sendable, Equatable {
    case string(String), number(Double), bool(Bool), null, array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }
}
