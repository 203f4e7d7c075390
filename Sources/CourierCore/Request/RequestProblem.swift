/// Something wrong with a ``Request`` that stops it from being rendered or sent.
///
/// Builders never throw: when given bad input they record a problem on the request instead, and
/// rendering (``Request/urlRequest()``) or sending it throws a ``CourierError`` whose cause is
/// ``CourierError/Cause/invalidRequest(_:)``. No byte is sent for a request with problems.
///
/// A problem's ``message`` never contains a header value, a credential or a body.
public struct RequestProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem, for callers that switch on it.
    #if hasAttribute(nonexhaustive)
        @nonexhaustive
    #endif
    public enum Kind: Sendable, Hashable {
        /// No base URL or absolute URL was given.
        case missingURL
        /// A URL string did not parse, or its scheme is not `http`/`https`, or it has no host.
        case invalidURL
        /// A pre-encoded query item holds characters that would change the query's structure.
        case invalidQuery
        /// A URI template is malformed or cannot be expanded with the given values.
        case invalidTemplate
        /// A path segment is empty, `.` or `..`.
        case invalidPathSegment
        /// The method is not a valid token.
        case invalidMethod
        /// A header name is not a valid token.
        case invalidHeaderName
        /// A header value contains CR, LF, NUL or another forbidden control character.
        case invalidHeaderValue
        /// A header that frames or routes the message (`Content-Length`, `Transfer-Encoding`,
        /// `Host`, `Connection`, `Upgrade`, `TE`, `Trailer`) disagrees with the request or is one
        /// only the transport may set.
        case invalidFraming
        /// The timeout is not a positive, finite number of seconds.
        case invalidTimeout
        /// Credentials cannot be encoded (for example a Basic user name containing `:`).
        case invalidCredentials
        /// A body could not be encoded (including a multipart part that could not be read).
        case bodyEncodingFailed
        /// A problem recorded by a custom builder.
        case custom(String)
    }

    /// The kind of problem.
    public var kind: Kind
    /// A human-readable explanation that names the offending part (never a secret value).
    public var message: String

    /// Creates a problem. Custom builders use this to record their own failures.
    /// - Parameters:
    ///   - kind: The kind of problem.
    ///   - message: What was wrong; must not contain secrets.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
