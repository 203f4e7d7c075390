/// Which parts of a request are secret, so descriptions, logs and errors can hide them.
///
/// Every ``Request`` carries a `Redaction`. Names are matched by the words they are made of, not
/// by exact spelling: a header, query parameter, form field or JSON key is sensitive when it
/// contains a secret word (`password`, `secret`, `token`, `cookie`, `authorization`, `auth`,
/// `signature`, `credential`, …) or pair (`api key`, `access key`, `session id`), whatever its
/// case and separators: `X-API-Key`, `new_password`, `newPassword`, `user[password]`,
/// `user%5Bpassword%5D`, `password_confirmation`, `client_secret` and `refresh_token` all are.
/// Builders such as ``apiKey(_:in:)`` and ``header(_:_:sensitive:)`` add the names they set;
/// extra names hide every name that ends in them (`ssn` hides `user[ssn]`).
public struct Redaction: Sendable, Hashable {
    /// The text shown in place of a secret.
    public static let placeholder = "<redacted>"

    /// The standard names only.
    static let standard = Redaction()

    /// Header names that are always sensitive (a sample: any name made of secret words is too).
    public static let standardHeaders: Set<HeaderName> = [
        .authorization, .proxyAuthorization, .cookie, .setCookie,
        "X-API-Key", "X-Auth-Token", "X-CSRF-Token", "X-Amz-Security-Token",
    ]

    /// Query parameter names (lower-cased) that are always sensitive (a sample: any name made of
    /// secret words is too).
    public static let standardQueryNames: Set<String> = [
        "token", "access_token", "refresh_token", "id_token", "api_key", "apikey", "api-key", "key",
        "password", "passwd", "pwd", "secret", "client_secret", "signature", "sig", "auth",
        "x-amz-signature", "x-amz-security-token",
    ]

    /// Extra header names to treat as sensitive.
    public var headers: Set<HeaderName> {
        didSet { compactHeaders = Set(headers.map { SensitiveName.compact($0.rawValue) }) }
    }
    /// Extra query names to treat as sensitive, compared case-insensitively.
    public var queryNames: Set<String> {
        didSet { compactQueryNames = Set(queryNames.map(SensitiveName.compact)) }
    }
    private var compactHeaders: Set<String>
    private var compactQueryNames: Set<String>

    /// Creates a redaction policy that hides the standard names plus the given ones.
    /// - Parameters:
    ///   - headers: Extra sensitive header names.
    ///   - queryNames: Extra sensitive query parameter names.
    public init(headers: Set<HeaderName> = [], queryNames: Set<String> = []) {
        guard !headers.isEmpty || !queryNames.isEmpty else {
            // Every request starts with this one: no sets to build.
            (self.headers, self.queryNames, self.compactHeaders, self.compactQueryNames) = ([], [], [], [])
            return
        }
        self.headers = headers
        self.queryNames = Set(queryNames.map(HTTPSyntax.asciiLowercased))
        self.compactHeaders = Set(headers.map { SensitiveName.compact($0.rawValue) })
        self.compactQueryNames = Set(self.queryNames.map(SensitiveName.compact))
    }

    /// Whether the value of header `name` must be hidden.
    /// - Parameter name: A header name.
    public func isSensitive(header name: HeaderName) -> Bool {
        Self.standardHeaders.contains(name) || headers.contains(name)
            || SensitiveName.isSensitive(name.rawValue, extra: compactHeaders)
    }

    /// Whether the value of query parameter `name` must be hidden.
    /// - Parameter name: An unencoded query name.
    public func isSensitive(queryName name: String) -> Bool {
        let lowered = HTTPSyntax.asciiLowercased(name)
        return Self.standardQueryNames.contains(lowered) || queryNames.contains(lowered)
            || SensitiveName.isSensitive(name, extra: compactQueryNames)
    }

    /// Whether the value of a body field (a form field or a JSON key, at any depth) named
    /// `name` must be hidden: the rules for query names, plus every header name this policy
    /// hides, since servers echo request headers back as JSON keys.
    /// - Parameter name: The field name as written (brackets and percent-encoding allowed).
    public func isSensitive(fieldName name: String) -> Bool {
        isSensitive(queryName: name) || SensitiveName.isSensitive(name, extra: compactHeaders)
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
        var redacted = HTTPHeaders(
            headers.map {
                isSensitive(header: $0.name) || headers.sensitiveNames.contains($0.name)
                    ? HTTPHeaders.Field(name: $0.name, value: Self.placeholder) : $0
            })
        for name in headers.sensitiveNames { redacted.markSensitive(name) }
        return redacted
    }

    /// Adds a sensitive query name.
    mutating func insert(queryName: String) {
        queryNames.insert(HTTPSyntax.asciiLowercased(queryName))
    }

    public static func == (lhs: Redaction, rhs: Redaction) -> Bool {
        lhs.headers == rhs.headers && lhs.queryNames == rhs.queryNames
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(headers)
        hasher.combine(queryNames)
    }
}
