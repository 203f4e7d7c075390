/// A step that transforms a request: `(Request) -> Request`.
///
/// Builders are pure and total: they never throw and never crash. Given bad input they record a
/// ``RequestProblem`` on the request, which is reported when it is rendered or sent.
///
/// Apply builders with ``|>(_:_:)->Request`` or ``Request/applying(_:)``, and
/// compose them with ``<>(_:_:)`` or ``chain(_:)``:
///
/// ```swift
/// let api: RequestBuilder = baseURL("https://api.example.com/v1") <> accept(.json)
/// let request = .get |> api |> path("users")
/// ```
///
/// The parameter is `consuming` so that a chain hands each step sole ownership of the request
/// and the step can change it in place; any `(Request) -> Request` function converts to it.
public typealias RequestBuilder = @Sendable (consuming Request) -> Request

/// The precedence of `|>` and `<>`: left-associative, below every arithmetic and comparison
/// operator, so `.get |> query("n", a + b)` needs no parentheses, and above assignment.
precedencegroup CourierPipelinePrecedence {
    associativity: left
    lowerThan: NilCoalescingPrecedence, ComparisonPrecedence, LogicalDisjunctionPrecedence
    higherThan: AssignmentPrecedence
}

/// Applies the builder or decoder on the right to the value on the left.
infix operator |> : CourierPipelinePrecedence

/// Composes two builders: the left one runs first.
infix operator <> : CourierPipelinePrecedence

/// Applies `builder` to `request`. Named form: ``Request/applying(_:)``.
/// - Parameters:
///   - request: The request to transform.
///   - builder: The step to apply.
/// - Returns: The transformed request.
@inlinable
public func |> (request: consuming Request, builder: RequestBuilder) -> Request {
    builder(request)
}

/// Composes two builders into one that runs `first`, then `second`. Named form: ``chain(_:)``.
/// - Parameters:
///   - first: The step that runs first.
///   - second: The step that runs next.
/// - Returns: The composed builder.
@inlinable
public func <> (first: @escaping RequestBuilder, second: @escaping RequestBuilder) -> RequestBuilder {
    { request in second(first(request)) }
}

/// Composes builders into one that runs them in order; the named form of `<>`.
/// - Parameter builders: The steps, first to last.
/// - Returns: The composed builder.
public func chain(_ builders: RequestBuilder...) -> RequestBuilder {
    { request in
        var request = consume request
        for builder in builders { request = builder(consume request) }
        return request
    }
}

extension Request {
    /// Applies builders in order; the named form of `|>`.
    ///
    /// ```swift
    /// let request = Request.get.applying(baseURL(api), path("users"), bearer(token))
    /// ```
    /// - Parameter builders: The steps, first to last.
    /// - Returns: The transformed request.
    public func applying(_ builders: RequestBuilder...) -> Request {
        var request = self
        for builder in builders { request = builder(consume request) }
        return request
    }

    /// Applies builders in order to this request in place.
    /// - Parameter builders: The steps, first to last.
    public mutating func apply(_ builders: RequestBuilder...) {
        for builder in builders { self = builder(self) }
    }
}
