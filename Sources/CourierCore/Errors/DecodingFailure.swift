#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Why a response body could not be decoded.
public struct DecodingFailure: Sendable, Hashable, CustomStringConvertible {
    /// The type that was expected.
    public var typeName: String
    /// What the decoder reported, including the coding path.
    public var message: String
    /// The first bytes of the body as text, with values of secret-looking JSON keys hidden.
    public var bodySnippet: String

    /// Creates a decoding failure.
    /// - Parameters:
    ///   - typeName: The expected type.
    ///   - message: What the decoder reported.
    ///   - bodySnippet: The start of the body.
    public init(typeName: String, message: String, bodySnippet: String) {
        self.typeName = typeName
        self.message = message
        self.bodySnippet = bodySnippet
    }

    /// The explanation with the snippet.
    public var description: String {
        "could not decode \(typeName): \(message); body starts: \(bodySnippet.debugDescription)"
    }
}

extension DecodingFailure {
    /// Describes `error` for `value`, with a redacted snippet of `body`.
    package init<Value>(value: Value.Type, error: any Error, body: Data, redactor: BodyRedactor = .standard) {
        let message: String
        switch error {
        case let error as DecodingError: message = error.summary
        case let error as any CustomStringConvertible: message = error.description
        default: message = "\(type(of: error))"
        }
        self.init(
            typeName: "\(Value.self)", message: redactor.redact(message),
            bodySnippet: BodySnippet.make(from: body, redactor: redactor))
    }
}

extension DecodingError {
    /// Where decoding stopped and why, in one line: `at items.0.id: type mismatch for Int: …`.
    package var summary: String {
        func path(_ context: DecodingError.Context) -> String {
            let joined = context.codingPath.map(\.stringValue).joined(separator: ".")
            return joined.isEmpty ? "" : "at \(joined): "
        }
        switch self {
        case .typeMismatch(let type, let context): return "\(path(context))type mismatch for \(type): \(context.debugDescription)"
        case .valueNotFound(let type, let context): return "\(path(context))missing \(type) value: \(context.debugDescription)"
        case .keyNotFound(let key, let context): return "\(path(context))missing key \"\(key.stringValue)\""
        case .dataCorrupted(let context): return "\(path(context))\(context.debugDescription)"
        @unknown default: return "decoding error"
        }
    }
}
