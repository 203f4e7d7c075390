import Courier
@_exported import TestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A user model shared by the tests.
struct User: Codable, Hashable, Sendable {
    var id: Int
    var name: String
}

/// An error body shaped like a typical API's.
struct APIError: Codable, Error, Hashable, Sendable {
    var code: String
    var message: String
}

let api = "https://api.example.com/v1"

extension Request {
    /// The rendered URL string, or a description of the failure.
    var renderedURL: String {
        do { return try validatedURL().absoluteString } catch { return "error: \(error)" }
    }

    /// The problem kinds, in order.
    var problemKinds: [RequestProblem.Kind] { problems.map(\.kind) }
}

