#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif


/// How redirects are followed, identically on every platform and by every transport: the
/// ``Exchange`` decides every hop with ``next(status:location:chain:)``.
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
///   and body;
/// - an `https` → `http` redirect that would re-send the body (a `307` or `308` with one) fails
///   with ``TransportFailure/Kind/redirectFailed``: the body (a password, a payment) would cross
///   the network in clear text. A downgrade without a body is followed, as browsers, curl, OkHttp
///   and URLSession follow it: the credentials were dropped at the change of origin and the next
///   URL is the server's own. Set ``followsDowngrades`` to `false` to refuse every one.
///
/// With ``refuse``, no redirect is followed: the `3xx` response itself is returned.
public struct RedirectPolicy: Sendable, Hashable {
    /// Whether redirects are followed at all.
    public var follows: Bool
    /// The most redirects followed for one request.
    public var maximumHops: Int
    /// More headers to remove once a redirect leaves the origin.
    public var sensitiveHeaders: Set<HeaderName>
    /// Whether an `https` → `http` redirect without a body is followed (`true` by default). A
    /// downgrade that would re-send a body is refused either way.
    public var followsDowngrades = true

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

    /// Whether `status` is a redirect a policy may follow: `301`, `302`, `303`, `307` or `308`
    /// (never `304`, `305` or `300`).
    /// - Parameter status: A response status.
    /// - Returns: Whether a followed redirect with this status goes on to a next hop.
    public static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// What to do with one redirect.
    public enum Step: Sendable, Hashable {
        /// Send this request next.
        case follow(Request)
        /// Return the redirect response itself.
        case deliver
        /// Fail with this transport failure.
        case fail(TransportFailure)
    }

    /// One request's way through its redirects: where it started, where it is now, and whether it
    /// has left its origin (after which credentials stay dropped).
    ///
    /// The ``Exchange`` makes one per call and hands it to ``next(status:location:chain:)`` at
    /// every redirect response; ``current`` is the request to send.
    public struct Chain: Sendable {
        /// The request sent last: the original one, then each followed redirect's.
        public internal(set) var current: Request
        /// How many redirects were followed.
        public internal(set) var hops = 0
        /// Whether any hop left the original origin.
        public internal(set) var leftOrigin = false
        /// The URL ``current`` is sent to, against which a relative `Location` resolves.
        var currentURL: URL?
        /// The origin of the first request.
        let origin: Origin?
        /// The sensitive headers of the original request: its redaction and its own marks.
        let redaction: Redaction

        /// Starts the chain of `request`.
        /// - Parameter request: The request as it is first sent.
        public init(_ request: Request) {
            current = request
            currentURL = try? request.validatedURL()
            origin = currentURL.flatMap(Origin.init)
            redaction = request.redaction.merging(Redaction(headers: request.headers.sensitiveNames))
        }
    }

    /// Decides how to follow `response`, a redirect to ``Chain/current``, updating `chain`.
    /// - Parameters:
    ///   - response: The response head; its status and raw `Location` header decide.
    ///   - chain: The request's redirect chain.
    /// - Returns: The request to send next, or to deliver the response, or the failure.
    public func next(after response: Response, chain: inout Chain) -> Step {
        next(status: response.status, location: response.headers[.location], chain: &chain)
    }

    /// Decides how to follow a redirect with `status` whose `Location` header is `location`, as
    /// the server sent it, updating `chain`. The one redirect step, taken by the ``Exchange`` for
    /// every transport.
    ///
    /// A status that is not a redirect (`301`, `302`, `303`, `307`, `308`) is delivered. The raw
    /// header decides, not a URL a transport derived from it: FoundationNetworking grafts a
    /// host-less `Location: file:///etc/passwd` onto the current origin before any delegate sees
    /// it. Only `http`/`https` targets and relative references are followed, never one that URL
    /// parsers would read differently (see `URLSyntax`), and userinfo in the target is dropped,
    /// so a server cannot choose the Basic credentials of the next hop.
    /// - Parameters:
    ///   - status: The response's status.
    ///   - location: Its `Location` header, as sent.
    ///   - chain: The request's redirect chain.
    /// - Returns: The request to send next, or to deliver the response, or the failure.
    public func next(status: Int, location: String?, chain: inout Chain) -> Step {
        guard follows, Self.isRedirect(status) else { return .deliver }
        guard chain.hops < maximumHops else {
            return .fail(
                TransportFailure(
                    .redirectFailed, code: -1007,  // URLError.httpTooManyRedirects
                    message: "more than \(maximumHops) redirects"))
        }
        // Spaces and tabs around a field value only: a no-break space is part of the reference.
        guard let location = location.map(HTTPSyntax.trimmed), !location.isEmpty else {
            return .fail(TransportFailure(.redirectFailed, message: "a \(status) redirect without a Location header"))
        }
        let target: URL
        switch URLSyntax.resolve(location, against: chain.currentURL) {
        case .success(let resolved): target = resolved.removingUserInfo()
        case .failure(let refusal):
            return .fail(TransportFailure(.redirectFailed, message: "the redirect's Location was refused: the URL \(refusal.reason)"))
        }
        guard let targetOrigin = Origin(target) else {
            return .fail(TransportFailure(.redirectFailed, message: "the redirect's Location is not an http or https URL"))
        }
        var next = chain.current
        let method = next.method.rawValue.uppercased()
        let becomesGet = ((status == 301 || status == 302) && method == "POST") || (status == 303 && method != "GET" && method != "HEAD")
        if becomesGet {
            next.method = .get
            next.body = nil
            next.bodySource = nil
            for field in next.headers where field.name.canonical.hasPrefix("content-") { next.headers.remove(field.name) }
        } else if status == 307 || status == 308, method != "GET", next.bodySource?.isRepeatable == false {
            // A streamed body has been read; a redirect that keeps the body would need it again.
            return .fail(
                TransportFailure(
                    .redirectFailed,
                    message: "a \(status) redirect must re-send the body, but it was a one-shot byte sequence; upload a file instead"))
        }
        if chain.currentURL?.scheme?.lowercased() == "https", targetOrigin.scheme == "http" {
            if next.body != nil || next.bodySource != nil {
                return .fail(
                    TransportFailure(
                        .redirectFailed,
                        message: "a \(status) redirect from https to http would re-send the body in clear text; refused"))
            }
            if !followsDowngrades {
                return .fail(TransportFailure(.redirectFailed, message: "a redirect from https to http; this policy refuses downgrades"))
            }
        }
        next = next.applying(url(target.absoluteString))
        if targetOrigin != chain.origin { chain.leftOrigin = true }
        if chain.leftOrigin {
            for field in next.headers {
                let name = field.name
                if name == .authorization || name == .proxyAuthorization || name == .cookie || chain.redaction.isSensitive(header: name)
                    || sensitiveHeaders.contains(name)
                {
                    next.headers.remove(name)
                }
            }
        }
        chain.hops += 1
        chain.current = next
        chain.currentURL = target
        return .follow(next)
    }
}

/// Scheme, host and port: what must match for a redirect to stay on the same origin
/// ([RFC 6454](https://www.rfc-editor.org/rfc/rfc6454)).
package struct Origin: Hashable {
    package var scheme: String
    package var host: String
    package var port: Int

    package init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host?.lowercased()
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    /// `https://api.example.com:443`: the key the retry budget and the circuit breaker count by.
    package var key: String { "\(scheme)://\(host):\(port)" }
}
