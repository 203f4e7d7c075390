import CourierCore
import CourierResilience

/// A path pattern such as `/users/{id}/posts`, matched segment by segment against a request's
/// path; the values of its `{name}` variables are handed to a route's handler.
///
/// A segment that is exactly `{name}` matches any one non-empty segment; the last segment may be
/// `{name...}` to match one or more remaining segments. Every other segment matches only itself,
/// compared after percent-decoding, so `/files/a%20b` matches the template `/files/a b`. A
/// trailing slash is significant, as it is to servers. Parsing is total: a segment with stray
/// braces is simply a literal.
///
/// ```swift
/// let template = PathTemplate("/users/{id}")
/// template.match("/users/42")?["id"]   // "42"
/// template.match("/users/42/posts")    // nil
/// ```
public struct PathTemplate: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case variable(String)
        case rest(String)
    }

    /// The template as written.
    public let description: String
    let segments: [Segment]

    /// Parses a template.
    /// - Parameter template: A path such as `/users/{id}`; a leading `/` is optional.
    public init(_ template: String) {
        description = template
        let parts = Self.split(template)
        segments = parts.enumerated().map { index, part in
            let isLast = index == parts.count - 1
            guard part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2 else {
                return .literal(PercentEncoding.decode(part[...]))
            }
            let name = String(part.dropFirst().dropLast())
            if isLast, name.hasSuffix("..."), name.count > 3 { return .rest(String(name.dropLast(3))) }
            guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }) else {
                return .literal(PercentEncoding.decode(part[...]))
            }
            return .variable(name)
        }
    }

    /// Parses a template written as a string literal.
    /// - Parameter value: The template.
    public init(stringLiteral value: String) {
        self.init(value)
    }

    /// The names of the template's variables, in order.
    public var variableNames: [String] {
        segments.compactMap {
            switch $0 {
            case .variable(let name), .rest(let name): name
            case .literal: nil
            }
        }
    }

    /// Matches a path.
    /// - Parameter path: A percent-encoded path such as ``Request/path``; a query is ignored.
    /// - Returns: The variables' decoded values, or `nil` when the path does not match.
    public func match(_ path: String) -> PathParameters? {
        var path = Substring(path)
        if let mark = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<mark] }
        let parts = Self.split(String(path))
        var values: [String: String] = [:]
        var index = 0
        for segment in segments {
            switch segment {
            case .literal(let literal):
                guard index < parts.count, PercentEncoding.decode(parts[index][...]) == literal else { return nil }
                index += 1
            case .variable(let name):
                guard index < parts.count, !parts[index].isEmpty else { return nil }
                values[name] = PercentEncoding.decode(parts[index][...])
                index += 1
            case .rest(let name):
                guard index < parts.count, !parts[index].isEmpty else { return nil }
                values[name] = parts[index...].map { PercentEncoding.decode($0[...]) }.joined(separator: "/")
                index = parts.count
            }
        }
        guard index == parts.count else { return nil }
        return PathParameters(values: values)
    }

    /// The segments between slashes; `""` and `"/"` have none, and a trailing slash gives a
    /// last, empty segment.
    private static func split(_ path: String) -> [String] {
        var trimmed = Substring(path)
        if trimmed.hasPrefix("/") { trimmed = trimmed.dropFirst() }
        guard !trimmed.isEmpty else { return [] }
        return trimmed.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }
}

/// The values a ``PathTemplate`` matched, by variable name, percent-decoded.
public struct PathParameters: Sendable, Hashable {
    /// Every matched variable and its decoded value.
    public let values: [String: String]

    /// Creates parameters from values, for tests of handlers.
    /// - Parameter values: The values by variable name.
    public init(values: [String: String] = [:]) {
        self.values = values
    }

    /// The value of a variable, or `nil` when the template has no such variable.
    /// - Parameter name: The variable's name, without braces.
    public subscript(_ name: String) -> String? {
        values[name]
    }

    /// The value of a variable as an integer, or `nil` when it is missing or not an integer.
    /// - Parameter name: The variable's name, without braces.
    /// - Returns: The integer.
    public func int(_ name: String) -> Int? {
        values[name].flatMap { Int($0) }
    }
}
