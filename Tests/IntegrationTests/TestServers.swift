import Courier
import CourierConformance
@_exported import TestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The loopback servers `scripts/test` started, read from the environment in one place
/// (``ConformanceServers/fromEnvironment()``, which the conformance suite uses too). Missing
/// configuration fails the test: these tests never skip, so a run without servers cannot pass by
/// accident.
enum TestServers {
    static func current(sourceLocation: SourceLocation = #_sourceLocation) throws -> ConformanceServers {
        do {
            return try ConformanceServers.fromEnvironment()
        } catch {
            Issue.record(error, sourceLocation: sourceLocation)
            throw error
        }
    }
}

/// The local httpbin (two instances, on two origins).
enum HTTPBin {
    static func url(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try TestServers.current(sourceLocation: sourceLocation).httpbin
    }

    /// The second httpbin, on another origin (`localhost` and another port).
    static func secondURL(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try TestServers.current(sourceLocation: sourceLocation).otherOrigin
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

/// The stream server (scripts/stream_server.py).
enum StreamServer {
    static func url(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try TestServers.current(sourceLocation: sourceLocation).stream
    }

    static func request(_ method: Request = .get, sourceLocation: SourceLocation = #_sourceLocation) throws -> Request {
        method |> baseURL(try url(sourceLocation: sourceLocation))
    }

    /// Byte `i` of the server's `/file` bodies.
    static func expected(_ range: Range<Int>) -> Data { Data(range.map { UInt8($0 % 251) }) }
}

/// The hostile server (scripts/hostile_server.py).
enum HostileServer {
    static func url(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try TestServers.current(sourceLocation: sourceLocation).hostile
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
