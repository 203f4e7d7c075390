import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How ``URLSessionExecutor`` follows redirects, identically on every platform.
///
/// When following (the default):
/// - at most ``maximumHops`` redirects, then ``CourierError/Cause/transport(_:)`` with kind
///   ``TransportFailure/Kind/redirectFailed``;
/// - only `http` and `https` targets and relative references, judged on the `Location` header
///   as the server sent it (`file:`, `data:`, `javascript:`, `mailto:` fail with
///   ``TransportFailure/Kind/redirectFailed``), never a target that URL parsers would read as
///   different hosts, and without any userinfo the target names (a server cannot choose the
///   Basic credentials of the next hop);
/// - once a redirect leaves the original origin (scheme, host or port; an `https` → `http`
///   downgrade counts), `Authorization`, `Proxy-Authorization`, `Cookie`, the request's own
///   sensitive headers (``Redaction``) and ``sensitiveHeaders`` are removed, and stay removed on
///   later hops even if they return to the origin;
/// - `301` and `302` after `POST`, and `303` after anything but `GET`/`HEAD`, continue as `GET`
///   without the body or its `Content-*` headers, as browsers do; `307` and `308` keep the method
///   and body.
///
/// With ``refuse``, no redirect is followed: the `3xx` response itself is returned.
public struct RedirectPolicy: Sendable, Hashable {
    /// Whether redirects are followed at all.
    public var follows: Bool
    /// The most redirects followed for one request.
    public var maximumHops: Int
    /// More headers to remove once a redirect leaves the origin.
    public var sensitiveHeaders: Set<HeaderName>

    /// Creates a policy that follows redirects.
    /// - Parameters:
    ///   - maximumHops: The most redirects followed; 20 by default.
    ///   - sensitiveHeaders: More headers to remove when leaving the origin.
    public init(maximumHops: Int = 20, sensitiveHeaders: Set<HeaderName> = []) {
        self.follows = true
        self.maximumHops = max(0, maximumHops)
        self.sensitiveHeaders = sensitiveHeaders
    }

    /// Follow up to 20 redirects, dropping credentials on a change of origin.
    public static let follow = RedirectPolicy()

    /// Follow no redirect; the `3xx` response is returned as it is.
    public static let refuse: RedirectPolicy = {
        var policy = RedirectPolicy(maximumHops: 0)
        policy.follows = false
        return policy
    }()

    /// What to do with one redirect.
    enum Decision: Equatable {
        /// Send this request next.
        case follow(URLRequest)
        /// Return the redirect response itself.
        case deliver
        /// Fail with this transport failure.
        case fail(TransportFailure)
    }

    /// The state of one request's redirect chain.
    struct Chain {
        /// The origin of the first request.
        var origin: Origin?
        /// The request sent last.
        var current: URLRequest
        /// How many redirects were followed.
        var hops = 0
        /// Whether any hop left the origin.
        var leftOrigin = false
        /// The sensitive headers of the original ``Request``.
        var redaction: Redaction
    }

    /// Decides how to follow a redirect with `status` whose `Location` header is `location`, as
    /// the server sent it, updating `chain`.
    ///
    /// The raw header decides, not the URL the transport derived from it: FoundationNetworking
    /// grafts a host-less `Location: file:///etc/passwd` onto the current origin before any
    /// delegate sees it. Only `http`/`https` targets and relative references are followed, never
    /// one that URL parsers would read differently (see `URLSyntax`), and userinfo in the target
    /// is dropped, so a server cannot choose the Basic credentials of the next hop.
    func decide(status: Int, location: String?, chain: inout Chain) -> Decision {
        guard follows else { return .deliver }
        guard chain.hops < maximumHops else {
            return .fail(
                TransportFailure(
                    .redirectFailed, code: URLError.httpTooManyRedirects.rawValue,
                    message: "more than \(maximumHops) redirects"))
        }
        guard let location = location?.trimmingCharacters(in: .whitespaces), !location.isEmpty else {
            return .fail(TransportFailure(.redirectFailed, message: "a \(status) redirect without a Location header"))
        }
        let target: URL
        switch URLSyntax.resolve(location, against: chain.current.url) {
        case .success(let resolved): target = resolved.removingUserInfo()
        case .failure(let refusal):
            return .fail(TransportFailure(.redirectFailed, message: "the redirect's Location was refused: the URL \(refusal.reason)"))
        }
        guard let targetOrigin = Origin(target) else {
            return .fail(TransportFailure(.redirectFailed, message: "the redirect's Location is not an http or https URL"))
        }
        var next = chain.current
        next.url = target
        if status == 307 || status == 308, next.httpBodyStream != nil, next.httpBody == nil,
            (next.httpMethod ?? "GET").uppercased() != "GET"
        {
            // A streamed body has been read; a redirect that keeps the body would need it again.
            return .fail(
                TransportFailure(
                    .redirectFailed,
                    message: "a \(status) redirect must re-send the body, but it was a one-shot byte sequence; upload a file instead"))
        }
        let method = (next.httpMethod ?? "GET").uppercased()
        let becomesGet = ((status == 301 || status == 302) && method == "POST")
            || (status == 303 && method != "GET" && method != "HEAD")
        if becomesGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for name in (next.allHTTPHeaderFields ?? [:]).keys where name.lowercased().hasPrefix("content-") {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        if targetOrigin != chain.origin { chain.leftOrigin = true }
        if chain.leftOrigin {
            for name in (next.allHTTPHeaderFields ?? [:]).keys {
                let header = HeaderName(rawValue: name)
                if header == .authorization || header == .proxyAuthorization || header == .cookie
                    || chain.redaction.isSensitive(header: header) || sensitiveHeaders.contains(header)
                {
                    next.setValue(nil, forHTTPHeaderField: name)
                }
            }
        }
        chain.hops += 1
        chain.current = next
        return .follow(next)
    }
}

/// Scheme, host and port: what must match for a redirect to stay on the same origin
/// ([RFC 6454](https://www.rfc-editor.org/rfc/rfc6454)).
struct Origin: Hashable {
    var scheme: String
    var host: String
    var port: Int

    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased()
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}

extension RedirectPolicy.Chain {
    /// The chain that starts with `urlRequest`, rendered from `request`: its origin, and the
    /// request's own sensitive headers to drop when a hop leaves that origin.
    init(starting urlRequest: URLRequest, for request: Request) {
        self.init(
            origin: urlRequest.url.flatMap(Origin.init), current: urlRequest,
            redaction: request.redaction.merging(Redaction(headers: request.headers.sensitiveNames)))
    }
}
