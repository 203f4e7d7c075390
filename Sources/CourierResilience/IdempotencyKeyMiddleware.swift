import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Gives every call of a method that is not idempotent (`POST`, `PATCH`) an `Idempotency-Key`:
/// one fresh key per logical call, the same on every retry of it, so that a server that
/// deduplicates by the key (Stripe's convention, and the IETF draft "The Idempotency-Key HTTP
/// Header Field") can make a repeated call safe, and the call becomes retryable
/// (``Request/isRetryable``).
///
/// Put it outside ``RetryMiddleware`` (earlier in `with(_:)`), so that the key is chosen once per
/// call, not per attempt. A request that already has a key keeps it; one that forbids retries
/// (``retryable(_:)`` with `false`) and idempotent methods are left alone.
///
/// ```swift
/// let api = URLSessionExecutor().with(IdempotencyKeyMiddleware(), RetryMiddleware())
/// // POST /payments goes out with Idempotency-Key: 5C8E…, and again with the same key if retried.
/// ```
public struct IdempotencyKeyMiddleware: Middleware {
    private let random: RandomSource

    /// Creates the middleware.
    /// - Parameter random: Where keys come from: the system's secure generator by default, a
    ///   seeded one in tests.
    public init(random: RandomSource = .system) {
        self.random = random
    }

    /// Adds a key to a call that needs one, then sends it.
    /// - Parameters:
    ///   - request: The request.
    ///   - next: The rest of the chain.
    /// - Returns: The response, unchanged.
    /// - Throws: What the rest of the chain throws.
    public func intercept(_ request: Request, next: Next) async throws -> StreamedResponse {
        guard !request.method.isIdempotent, request.allowsRetry != false, request.headers[.idempotencyKey] == nil else {
            return try await next(request)
        }
        var keyed = request
        keyed.headers.set(.idempotencyKey, Self.key(from: random))
        return try await next(keyed)
    }

    /// A random (version 4) UUID from `random`, in its usual form.
    static func key(from random: RandomSource) -> String {
        var high = random.next()
        var low = random.next()
        high = (high & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
        low = (low & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        let bytes = withUnsafeBytes(of: high.bigEndian) { Array($0) } + withUnsafeBytes(of: low.bigEndian) { Array($0) }
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        )).uuidString
    }
}
