import CourierCore
import CourierResilience

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A method and a path template, to say which requests a test expects: `.get("/users/{id}")`.
public struct RequestPattern: Sendable, Hashable, CustomStringConvertible {
    /// The method to match.
    public var method: HTTPMethod
    /// The path to match; see ``PathTemplate``.
    public var template: PathTemplate

    /// Creates a pattern.
    /// - Parameters:
    ///   - method: The method to match.
    ///   - template: The path to match.
    public init(_ method: HTTPMethod, _ template: PathTemplate) {
        self.method = method
        self.template = template
    }

    /// A `GET` pattern.
    /// - Parameter template: The path to match.
    /// - Returns: The pattern.
    public static func get(_ template: PathTemplate) -> RequestPattern { RequestPattern(.get, template) }
    /// A `POST` pattern.
    /// - Parameter template: The path to match.
    /// - Returns: The pattern.
    public static func post(_ template: PathTemplate) -> RequestPattern { RequestPattern(.post, template) }
    /// A `PUT` pattern.
    /// - Parameter template: The path to match.
    /// - Returns: The pattern.
    public static func put(_ template: PathTemplate) -> RequestPattern { RequestPattern(.put, template) }
    /// A `PATCH` pattern.
    /// - Parameter template: The path to match.
    /// - Returns: The pattern.
    public static func patch(_ template: PathTemplate) -> RequestPattern { RequestPattern(.patch, template) }
    /// A `DELETE` pattern.
    /// - Parameter template: The path to match.
    /// - Returns: The pattern.
    public static func delete(_ template: PathTemplate) -> RequestPattern { RequestPattern(.delete, template) }

    /// Whether `request` has the method and a path the template matches.
    /// - Parameter request: The request.
    /// - Returns: `true` when it matches.
    public func matches(_ request: Request) -> Bool {
        request.method == method && template.match(request.path) != nil
    }

    /// `GET /users/{id}`.
    public var description: String { "\(method.rawValue) \(template)" }
}

/// A failed check of what an ``InMemoryExecutor`` received. Its ``description`` shows the
/// difference, with secrets redacted; throwing it from a test fails the test with that message.
public struct VerificationFailure: Error, Sendable, CustomStringConvertible {
    /// What was expected, what was received and where they differ.
    public let description: String
}

extension InMemoryExecutor {
    /// The received requests that match `pattern`, in order.
    /// - Parameter pattern: The method and path template.
    /// - Returns: The matching requests.
    public func requests(matching pattern: RequestPattern) -> [Request] {
        requests.filter(pattern.matches)
    }

    /// Checks how many received requests match `pattern`.
    /// - Parameters:
    ///   - pattern: The method and path template.
    ///   - count: The expected number.
    /// - Throws: ``VerificationFailure`` listing every request received when the count differs.
    public func verify(_ pattern: RequestPattern, count: Int) throws(VerificationFailure) {
        let received = requests
        let matched = received.filter(pattern.matches).count
        guard matched != count else { return }
        throw VerificationFailure(
            description: "expected \(count) request\(count == 1 ? "" : "s") matching \(pattern), received \(matched)\n"
                + Self.listing(received))
    }

    /// Checks that the received requests match `patterns` one for one, in order.
    /// - Parameter patterns: The expected requests, in the order they should have been sent.
    /// - Throws: ``VerificationFailure`` showing both sequences and the first position where
    ///   they differ.
    public func verify(order patterns: [RequestPattern]) throws(VerificationFailure) {
        let received = requests
        let firstDifference = zip(patterns, received).enumerated().first { !$0.element.0.matches($0.element.1) }?.offset
            ?? (patterns.count == received.count ? nil : min(patterns.count, received.count))
        guard let index = firstDifference else { return }
        var lines = ["requests differ at position \(index) (expected \(patterns.count), received \(received.count)):"]
        for position in 0..<max(patterns.count, received.count) {
            let expected = position < patterns.count ? patterns[position].description : "(nothing)"
            let got = position < received.count ? Self.line(received[position]) : "(nothing)"
            let same = position < patterns.count && position < received.count && patterns[position].matches(received[position])
            lines.append(same ? "  \(position): \(got)" : "- \(position): \(expected)\n+ \(position): \(got)")
        }
        throw VerificationFailure(description: lines.joined(separator: "\n"))
    }

    /// Checks that the received requests are exactly `expected`: every field, in order.
    /// - Parameter expected: The requests that should have been sent.
    /// - Throws: ``VerificationFailure`` with a line diff of the first request that differs, in
    ///   HTTP/1.1 form with secrets redacted.
    public func verify(requests expected: [Request]) throws(VerificationFailure) {
        let received = requests
        guard received != expected else { return }
        guard received.count == expected.count else {
            throw VerificationFailure(
                description: "expected \(expected.count) requests, received \(received.count)\n"
                    + "expected:\n" + Self.listing(expected) + "\nreceived:\n" + Self.listing(received))
        }
        let index = zip(expected, received).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? 0
        throw VerificationFailure(
            description: "request \(index) differs:\n" + Self.difference(expected[index], received[index]))
    }

    private static func line(_ request: Request) -> String {
        "\(request.method.rawValue) \(request.urlString(redacting: request.redaction) ?? request.path)"
    }

    private static func listing(_ requests: [Request]) -> String {
        requests.isEmpty
            ? "  (none)"
            : requests.enumerated().map { "  \($0.offset): \(line($0.element))" }.joined(separator: "\n")
    }

    /// A line diff of the two requests' HTTP forms, plus the fields that form does not show.
    static func difference(_ expected: Request, _ received: Request) -> String {
        let left = expected.description.split(separator: "\n", omittingEmptySubsequences: false)
        let right = received.description.split(separator: "\n", omittingEmptySubsequences: false)
        var lines: [String] = []
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? String(left[index]) : nil
            let b = index < right.count ? String(right[index]) : nil
            if a == b {
                lines.append("  \(a ?? "")")
            } else {
                if let a { lines.append("- \(a)") }
                if let b { lines.append("+ \(b)") }
            }
        }
        var notes: [String] = []
        if expected.body != received.body {
            notes.append(
                "body: expected \(snippet(expected.body)), received \(snippet(received.body))")
        }
        if expected.timeout != received.timeout { notes.append("timeout: \(show(expected.timeout)) vs \(show(received.timeout))") }
        if expected.deadline != received.deadline { notes.append("deadline: \(show(expected.deadline)) vs \(show(received.deadline))") }
        if expected.cachePolicy != received.cachePolicy {
            notes.append("cache policy: \(show(expected.cachePolicy)) vs \(show(received.cachePolicy))")
        }
        if expected.allowsRetry != received.allowsRetry {
            notes.append("allowsRetry: \(show(expected.allowsRetry)) vs \(show(received.allowsRetry))")
        }
        if expected.redaction != received.redaction { notes.append("redaction settings differ") }
        if left == right && notes.isEmpty {
            notes.append("they differ only in a redacted value (a credential, a sensitive query value or the URL's userinfo)")
        }
        return (lines + notes.map { "# \($0)" }).joined(separator: "\n")
    }

    private static func snippet(_ body: Data?) -> String {
        guard let body else { return "none" }
        return "\(body.count) bytes \(BodySnippet.make(from: body).debugDescription)"
    }

    private static func show<T>(_ value: T?) -> String {
        value.map { "\($0)" } ?? "none"
    }
}
