#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sets the request method.
/// - Parameter method: The method, for example `.post` or `"PURGE"`.
/// - Returns: The builder.
public func method(_ method: HTTPMethod) -> RequestBuilder {
    { request in
        var request = consume request
        request.method = method
        return request
    }
}

/// Sets the timeout: how long the transport may wait for data before failing with
/// ``CourierError/Cause/timedOut``.
///
/// Any positive, finite number of seconds works: sub-second values mean what they say (on
/// Linux, where FoundationNetworking counts whole seconds, ``URLSessionExecutor`` enforces the
/// exact value itself), and values above ``Request/maximumInterval`` (a year) are clamped to it.
/// Zero, negative and non-finite values are reported as a ``RequestProblem/Kind/invalidTimeout``
/// problem.
///
/// Hidden by a member named `timeout` in your type? Write `Courier.timeout(_:)`.
/// - Parameter seconds: The timeout in seconds.
/// - Returns: The builder.
public func timeout(_ seconds: TimeInterval) -> RequestBuilder {
    { request in
        var request = consume request
        request.timeout = seconds
        return request
    }
}

/// Sets how the request uses the URL cache.
/// - Parameter policy: The cache policy.
/// - Returns: The builder.
public func cachePolicy(_ policy: CachePolicy) -> RequestBuilder {
    { request in
        var request = consume request
        request.cachePolicy = policy
        return request
    }
}

/// Sets a total deadline: the most time the whole call may take, including connecting, waiting,
/// receiving the body and any retries by middleware. When it passes, the call is cancelled and
/// throws ``CourierError/Cause/timedOut``.
///
/// ``timeout(_:)`` bounds how long the transport waits for data; a slow server that sends a byte
/// now and then never trips it. A deadline bounds the whole call.
///
/// Inside a type with a property or method named `deadline` (or `timeout`, `path`, `header`…),
/// the bare name means the member, and the compiler says "use of 'deadline' refers to instance
/// method rather than global function": name the builder by its module, `Courier.deadline(_:)`
/// (or `CourierCore.deadline(_:)` with `import CourierCore`). Every builder is reached that way.
/// - Parameter seconds: The deadline in seconds; must be positive and finite. Values above
///   ``Request/maximumInterval`` (a year) are clamped to it.
/// - Returns: The builder.
public func deadline(_ seconds: TimeInterval) -> RequestBuilder {
    { request in
        var request = consume request
        request.deadline = seconds
        return request
    }
}

/// Lets retry middleware send this request again even if its method is not idempotent (or, with
/// `false`, forbids it even if it is). The ``Exchange`` follows the same choice when a hop's
/// connection is lost before any answer (it sends such a hop once more).
///
/// Only opt a `POST` or `PATCH` in when the server makes repeats safe, for example with an
/// idempotency key.
/// - Parameter allowed: Whether retries are allowed.
/// - Returns: The builder.
public func retryable(_ allowed: Bool = true) -> RequestBuilder {
    { request in
        var request = consume request
        request.allowsRetry = allowed
        return request
    }
}

/// Names what the request does (an OpenAPI `operationId`, say `getUser`): observability
/// middleware records it (`CourierLogging`, `CourierTracing`), nothing sends it.
/// - Parameter id: The name.
/// - Returns: The builder.
public func operationID(_ id: String) -> RequestBuilder {
    { request in
        var request = consume request
        request.operationID = id
        return request
    }
}
