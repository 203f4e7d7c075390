/// Which parts of a request are secret, so descriptions, logs and errors can hide them.
///
/// Every ``Request`` carries a `Redaction`. The standard sets cover credentials users expect to be
/// hidden (`Authorization`, `Cookie`, `token=` …); builders such as ``apiKey(_:in:)`` and
/// ``header(_:_:sensitive:)`` add the names they set. Names compare case-insensitively.
public struct Redaction: Sendable, Hashable {
    /// The text shown in place of a secret.
    public static let placeholder = "<redacted>"

    /// Header names that are always sensitive.
    public static let standardHeaders: Set<HeaderName> = [
        .authorization, .proxyAuthorization, .cookie, .setCookie,
        "X-API-Key", "X-Auth-Token", "X-CSRF-Token", "X-Amz-Security-Token",
    ]

    /// Query parameter names (lower-cased) that are always sensitive.
    public static let standardQueryNames: Set<String> = [
        "token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "api-key", "key",
        "password", "passwd", "pwd", "secret", "client_secret", "signature", "sig", "auth",
        "x-amz-signature", "x-amz-security-token",
    ]

    /// Extra header names to treat as sensitive.
    public var headers: Set<HeaderName>
    /// Extra query names to treat as sensitive, compared case-insensitively.
    public var queryNames: Set<String>

    /// Creates a redaction policy that hides the standard names plus the given ones.
    /// - Parameters:
    ///   - headers: Extra sensitive header names.
    ///   - queryNames: Extra sensitive query parameter names.
    public init(headers: Set<HeaderName> = [], queryNames: Set<String> = []) {
        self.headers = headers
        self.queryNames = Set(queryNames.map(HTTPSyntax.asciiLowercased))
    }

    /// Whether the value of header `name` must be hidden.
    /// - Parameter name: A header name.
    public func isSensitive(header name: HeaderName) -> Bool {
        Self.standardHeaders.contains(name) || headers.contains(name)
    }

    /// Whether the value of query parameter `name` must be hidden.
    /// - Parameter name: An unencoded query name.
    public func isSensitive(queryName name: String) -> Bool {
        let lowered = HTTPSyntax.asciiLowercased(name)
        return Self.standardQueryNames.contains(lowered) || queryNames.contains(lowered)
    }

    /// The union of this policy and `other`.
    /// - Parameter other: More names to hide.
    /// - Returns: A policy that hides both sets.
    public func merging(_ other: Redaction) -> Redaction {
        var merged = self
        merged.headers.formUnion(other.headers)
        merged.queryNames.formUnion(other.queryNames)
        return merged
    }

    /// A copy of `headers` with sensitive values replaced by ``placeholder``.
    /// - Parameter headers: The headers, of a request or a response.
    /// - Returns: The redacted headers.
    public func redacting(_ headers: HTTPHeaders) -> HTTPHeaders {
        HTTPHeaders(headers.map { isSensitive(header: $0.name) ? HTTPHeaders.Field(name: $0.name, value: Self.placeholder) : $0 })
    }

    /// Adds a sensitive query name.
    mutating func insert(queryName: String) {
        queryNames.insert(HTTPSyntax.asciiLowercased(queryName))
    }
}
