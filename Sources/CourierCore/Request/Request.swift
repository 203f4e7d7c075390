#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
        get { if case .data(let data) = payload { data } else { nil } }
        set {
            if let newValue {
                payload = .data(newValue)
            } else if case .data = payload {
                payload = .none
            }
        }
    }
    /// A body read when the request is sent (a file, parts with files, a byte sequence), for
    /// bodies that should never be held in memory; see ``upload(_:contentType:)``. Setting it
    /// removes any ``body``.
    public var bodySource: BodySource? {
        get { if case .source(let source) = payload { source } else { nil } }
        set {
            if let newValue {
                payload = .source(newValue)
            } else if case .source = payload {
                payload = .none
            }
        }
    }
    /// The body: at most one of bytes and a source, so the two can never disagree.
    var payload: Payload
    /// The timeout in seconds, or `nil` for the session's default.
    ///
    /// Kept in the request itself, not with the settings behind the shared reference: servers set
    /// it on every request (CourierNIO's and the README's advice), and setting it there would copy
    /// those settings, an allocation a request.
    public var timeout: TimeInterval?
    /// The cache policy, or `nil` for the session's default.
    public var cachePolicy: CachePolicy? {
        get { settings.value.cachePolicy }
        _modify { yield &settings.value.cachePolicy }
    }
    /// The total time the whole exchange may take (connect, send, wait, receive, and any retries
    /// by middleware), in seconds; `nil` for no limit. Unlike ``timeout``, which bounds the wait for
    /// data, this bounds the whole call. Exceeding it throws ``CourierError/Cause/timedOut``.
    public var deadline: TimeInterval? {
        get { settings.value.deadline }
        _modify { yield &settings.value.deadline }
    }
    /// Whether retry middleware may send this request again: `nil` decides by the method
    /// (only idempotent methods are retried), `true` opts a request in, `false` opts it out.
    public var allowsRetry: Bool? {
        get { settings.value.allowsRetry }
        _modify { yield &settings.value.allowsRetry }
    }
    /// A name for what the request does (an OpenAPI `operationId` such as `getUser`), for logs,
    /// metrics and traces; never sent. See ``operationID(_:)``.
    public var operationID: String? {
        get { settings.value.operationID }
        _modify { yield &settings.value.operationID }
    }
    /// What descriptions, logs and errors must hide.
    public var redaction: Redaction {
        get { settings.value.redaction }
        _modify { yield &settings.value.redaction }
    }
    /// How later query and form builders write lists, booleans and dates when they are not
    /// given a strategy of their own; see ``encodingDefaults(query:form:)``.
    public var encodingDefaults: EncodingDefaults {
        get { settings.value.encodingDefaults }
        _modify { yield &settings.value.encodingDefaults }
    }
    /// Whether retry middleware may send this request again: ``allowsRetry`` when set, otherwise
    /// whether the method is idempotent or the request carries an `Idempotency-Key`
    /// (``HeaderName/idempotencyKey``: the server deduplicates repeats by it).
    /// A request whose body is a one-shot sequence is never retryable.
    public var isRetryable: Bool {
        if let bodySource, !bodySource.isRepeatable { return false }
        return allowsRetry ?? (method.isIdempotent || headers[.idempotencyKey] != nil)
    }

    /// Problems recorded by builders (for example a body that failed to encode).
    public var recordedProblems: [RequestProblem] { settings.value.recordedProblems }
    /// The fields most requests leave alone, behind one copy-on-write reference: every builder
    /// moves the request in and out, and a smaller value moves faster. Shared until one of them
    /// is changed.
    var settings: CopyOnWrite<Settings>
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
        self.payload = .none
        self.settings = CopyOnWrite(Settings())
    }

    /// Records a problem that makes this request invalid. Custom builders call this instead of
    /// throwing or crashing.
    /// - Parameter problem: What went wrong; its message must not contain secrets.
    public mutating func record(_ problem: RequestProblem) {
        settings.value.recordedProblems.append(problem)
    }

    /// A `GET` request with no URL yet.
    public static var get: Request { Blank.get }
    /// A `POST` request with no URL yet.
    public static var post: Request { Blank.post }
    /// A `PUT` request with no URL yet.
    public static var put: Request { Blank.put }
    /// A `PATCH` request with no URL yet.
    public static var patch: Request { Blank.patch }
    /// A `DELETE` request with no URL yet.
    public static var delete: Request { Blank.delete }
    /// A `HEAD` request with no URL yet.
    public static var head: Request { Blank.head }
    /// An `OPTIONS` request with no URL yet.
    public static var options: Request { Blank.options }
}

extension Request {
    /// The starting requests, made once: copying one costs less than initialising every field.
    private enum Blank {
        static let get = Request(method: .get)
        static let post = Request(method: .post)
        static let put = Request(method: .put)
        static let patch = Request(method: .patch)
        static let delete = Request(method: .delete)
        static let head = Request(method: .head)
        static let options = Request(method: .options)
    }

    /// The request's less used fields, kept together behind ``Request/settings``.
    struct Settings: Sendable, Hashable {
        var cachePolicy: CachePolicy?
        var deadline: TimeInterval?
        var allowsRetry: Bool?
        var redaction = Redaction()
        var encodingDefaults = EncodingDefaults()
        var recordedProblems: [RequestProblem] = []
        var operationID: String?
    }

    /// What a request's body is.
    enum Payload: Sendable, Hashable {
        case none
        case data(Data)
        case source(BodySource)
    }
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

extension Request {
    /// Appends query items, making room for a few at the first so that a chain of `query`
    /// builders does not regrow the array at each step.
    mutating func appendQueryItems(_ items: some Collection<QueryItem>) {
        if queryItems.isEmpty { queryItems.reserveCapacity(Swift.max(4, items.count)) }
        queryItems.append(contentsOf: items)
    }

    /// Appends one query item, making room for a few at the first.
    @usableFromInline
    mutating func appendQueryItem(_ item: QueryItem) {
        if queryItems.isEmpty { queryItems.reserveCapacity(4) }
        queryItems.append(item)
    }

    /// Appends path segments, making room for a few at the first.
    @usableFromInline
    mutating func appendPathSegments(_ segments: [String]) {
        if pathSegments.isEmpty {
            guard segments.count < 4 else { pathSegments = segments; return }
            pathSegments.reserveCapacity(4)
        }
        pathSegments.append(contentsOf: segments)
    }
}
