import Foundation

/// An HTTP request as a plain value: method, URL parts, headers, body and loading options.
///
/// A `Request` is built by applying ``RequestBuilder``s to a starting value such as
/// ``Request/get``. Nothing is encoded or validated until the request is rendered with
/// ``urlRequest()`` or sent by an ``Executor``; bad input given to a builder is recorded as a
/// ``RequestProblem`` and reported then, before any byte is sent.
///
/// ```swift
/// let request = .get
///     |> baseURL("https://api.example.com/v1")
///     |> path("users", 42)
///     |> query("fields", ["name", "email"])
///     |> bearer(token)
/// try request.urlRequest().url  // https://api.example.com/v1/users/42?fields=name&fields=email
/// ```
public struct Request: Sendable, Hashable {
    /// The request method.
    public var method: HTTPMethod
    /// The URL that path segments and query items are appended to.
    public var baseURL: URL?
    /// Unencoded path segments appended to ``baseURL``'s path; each is one segment, so `/` inside
    /// one is sent as `%2F`.
    public var pathSegments: [String]
    /// Unencoded query items, in order, appended after any query in ``baseURL``.
    public var queryItems: [QueryItem]
    /// The header fields, in order.
    public var headers: HTTPHeaders
    /// The body bytes, already encoded by a body builder. Setting it removes any ``bodySource``.
    public var body: Data? {
        didSet { if body != nil, bodySource != nil { bodySource = nil } }
    }
    /// A body read when the request is sent (a file, parts with files, a byte sequence), for
    /// bodies that should never be held in memory; see ``upload(_:contentType:)``. Setting it
    /// removes any ``body``.
    public var bodySource: BodySource? {
        didSet { if bodySource != nil, body != nil { body = nil } }
    }
    /// The timeout in seconds, or `nil` for the session's default.
    public var timeout: TimeInterval?
    /// The cache policy, or `nil` for the session's default.
    public var cachePolicy: CachePolicy?
    /// The total time the whole exchange may take (connect, send, wait, receive, and any retries
    /// by middleware), in seconds; `nil` for no limit. Unlike ``timeout``, which bounds the wait for
    /// data, this bounds the whole call. Exceeding it throws ``CourierError/Cause/timedOut``.
    public var deadline: TimeInterval?
    /// Whether retry middleware may send this request again: `nil` decides by the method
    /// (only idempotent methods are retried), `true` opts a request in, `false` opts it out.
    public var allowsRetry: Bool?
    /// What descriptions, logs and errors must hide.
    public var redaction: Redaction
    /// How later query and form builders write lists, booleans and dates when they are not
    /// given a strategy of their own; see ``encodingDefaults(query:form:)``.
    public var encodingDefaults: EncodingDefaults
    /// Whether retry middleware may send this request again: ``allowsRetry`` when set, otherwise
    /// whether the method is idempotent.
    /// A request whose body is a one-shot sequence is never retryable.
    public var isRetryable: Bool {
        if let bodySource, !bodySource.isRepeatable { return false }
        return allowsRetry ?? method.isIdempotent
    }

    /// Problems recorded by builders (for example a body that failed to encode).
    public private(set) var recordedProblems: [RequestProblem]
    /// The outcome of checking ``baseURL``, when a URL builder already did (reused while the URL
    /// is the same one). Never part of equality or hashing.
    var baseURLCheck = BaseURLCheck()

    /// Creates a request.
    /// - Parameters:
    ///   - method: The method; `GET` by default.
    ///   - baseURL: The base URL, if known yet.
    public init(method: HTTPMethod = .get, baseURL: URL? = nil) {
        self.method = method
        self.baseURL = baseURL
        self.pathSegments = []
        self.queryItems = []
        self.headers = HTTPHeaders()
        self.body = nil
        self.bodySource = nil
        self.timeout = nil
        self.cachePolicy = nil
        self.deadline = nil
        self.allowsRetry = nil
        self.redaction = Redaction()
        self.encodingDefaults = EncodingDefaults()
        self.recordedProblems = []
    }

    /// Records a problem that makes this request invalid. Custom builders call this instead of
    /// throwing or crashing.
    /// - Parameter problem: What went wrong; its message must not contain secrets.
    public mutating func record(_ problem: RequestProblem) {
        recordedProblems.append(problem)
    }

    /// A `GET` request with no URL yet.
    public static var get: Request { Request(method: .get) }
    /// A `POST` request with no URL yet.
    public static var post: Request { Request(method: .post) }
    /// A `PUT` request with no URL yet.
    public static var put: Request { Request(method: .put) }
    /// A `PATCH` request with no URL yet.
    public static var patch: Request { Request(method: .patch) }
    /// A `DELETE` request with no URL yet.
    public static var delete: Request { Request(method: .delete) }
    /// A `HEAD` request with no URL yet.
    public static var head: Request { Request(method: .head) }
    /// An `OPTIONS` request with no URL yet.
    public static var options: Request { Request(method: .options) }
}

/// The query and form strategies a request's later builders use by default.
public struct EncodingDefaults: Sendable, Hashable {
    /// For `query` builders; `nil` for ``QueryEncoding``'s defaults.
    public var query: QueryEncoding?
    /// For `form(encoding:)` builders; `nil` for ``FormEncoder``'s defaults.
    public var form: FormEncoder?

    /// No defaults set.
    public init(query: QueryEncoding? = nil, form: FormEncoder? = nil) {
        self.query = query
        self.form = form
    }
}

/// A base URL and its structural problems, computed once by the URL builders. Equal to every
/// other check and hashing nothing, so that two requests differ only in what they say.
struct BaseURLCheck: Sendable, Hashable {
    var url: URL?
    var problems: [RequestProblem] = []

    static func == (lhs: BaseURLCheck, rhs: BaseURLCheck) -> Bool { true }
    func hash(into hasher: inout Hasher) {}

    /// The check of `url`.
    static func of(_ url: URL) -> BaseURLCheck { BaseURLCheck(url: url, problems: Request.baseURLProblems(url)) }
}
