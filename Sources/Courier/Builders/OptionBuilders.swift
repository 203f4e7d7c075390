import Foundation

/// Sets the request method.
/// - Parameter method: The method, for example `.post` or `"PURGE"`.
/// - Returns: The builder.
public func method(_ method: HTTPMethod) -> RequestBuilder {
    { request in
        var request = request
        request.method = method
        return request
    }
}

/// Sets the timeout: how long the transport may wait for data before failing with
/// ``CourierError/Cause/timedOut``.
///
/// A value that is not a positive, finite number is reported as a
/// ``RequestProblem/Kind/invalidTimeout`` problem.
/// - Parameter seconds: The timeout in seconds.
/// - Returns: The builder.
public func timeout(_ seconds: TimeInterval) -> RequestBuilder {
    { request in
        var request = request
        request.timeout = seconds
        return request
    }
}

/// Sets how the request uses the URL cache.
/// - Parameter policy: The cache policy.
/// - Returns: The builder.
public func cachePolicy(_ policy: CachePolicy) -> RequestBuilder {
    { request in
        var request = request
        request.cachePolicy = policy
        return request
    }
}
