#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Sets the base URL that path segments and query items are appended to.
///
/// A string that does not parse, whose scheme is not `http`/`https`, or that different URL
/// parsers would read as different hosts (a backslash, whitespace or control characters, a
/// percent-escape in the host, two `@`, a port that is not a number up to 65535) records a
/// ``RequestProblem/Kind/invalidURL`` problem. A path in the base URL is kept
/// (`https://api.test/v1` plus `path("users")` is `/v1/users`, with or without a trailing slash),
/// and so is a query in it.
///
/// An internationalized host is taken in its ASCII form (IDNA: each label lower-cased, composed
/// and Punycode-encoded), as URLs on Apple platforms give it, on every platform:
/// `https://bücher.example/` is sent to, and keeps its cookies for, `xn--bcher-kva.example`. One
/// that cannot be a host name (a space or punctuation in a label, a label over 63 bytes) is an
/// ``RequestProblem/Kind/invalidURL`` problem.
/// - Parameter string: The base URL, for example `"https://api.example.com/v1"`.
/// - Returns: The builder.
public func baseURL(_ string: String) -> RequestBuilder {
    // An internationalized host in its ASCII form, as URLs on Apple platforms give it.
    guard let string = URLSyntax.asciiHost(in: string) else { return invalidHost }
    let defect = URLSyntax.defect(inAbsoluteURL: string)
    let parsed = defect == nil ? URL(string: string) : nil
    guard let parsed else {
        let problem = RequestProblem(.invalidURL, "the base URL " + (defect ?? "does not parse as a URL"))
        return { request in
            var request = consume request
            request.record(problem)
            return request
        }
    }
    return baseURL(parsed)
}

/// Sets the base URL that path segments and query items are appended to.
/// - Parameter url: The base URL.
/// - Returns: The builder.
public func baseURL(_ url: URL) -> RequestBuilder {
    let check = BaseURLCheck.of(url)
    return { request in
        var request = consume request
        request.baseURL = url
        request.baseURLCheck = check
        return request
    }
}

/// Sets the whole URL, replacing the base URL, path segments and query items.
///
/// The URL's own path and query are sent as they are (they are taken to be encoded already);
/// later `path` and `query` builders append to them. Strings that URL parsers would disagree on
/// are refused as ``baseURL(_:)-(String)`` refuses them.
///
/// Credentials in the URL (`https://user:password@host/…`, percent-encoded) are sent as Basic
/// authentication, as curl sends them: the exchange takes them off the URL (userinfo never goes
/// on the wire) and sets `Authorization: Basic …` unless the request has an `Authorization` of
/// its own, on every transport. Like any `Authorization`, it is redacted when printed and never
/// sent to another origin after a redirect; over plain `http` it is readable on the network, as
/// ``basic(username:password:)`` is.
/// - Parameter string: An absolute `http` or `https` URL.
/// - Returns: The builder.
public func url(_ string: String) -> RequestBuilder {
    // An internationalized host in its ASCII form, as URLs on Apple platforms give it.
    guard let string = URLSyntax.asciiHost(in: string) else { return invalidHost }
    let defect = URLSyntax.defect(inAbsoluteURL: string)
    let parsed = defect == nil ? URL(string: string) : nil
    let check = parsed.map(BaseURLCheck.of)
    return { request in
        var request = consume request
        request.pathSegments = []
        request.queryItems = []
        if let parsed, let check {
            request.baseURL = parsed
            request.baseURLCheck = check
        } else {
            request.baseURL = nil
            request.record(RequestProblem(.invalidURL, defect.map { "the URL " + $0 } ?? "the URL does not parse as a URL"))
        }
        return request
    }
}

/// Appends path segments, one per argument, each percent-encoded on its own.
///
/// `path("users", 42)` appends `/users/42`; `path("a/b")` appends `/a%2Fb`, because a segment
/// can never add structure to the path. An empty, `.` or `..` segment is reported as a
/// ``RequestProblem/Kind/invalidPathSegment`` problem.
/// - Parameter segments: The segments; any value is written with its `description`.
/// - Returns: The builder.
@inlinable
public func path(_ segments: any CustomStringConvertible...) -> RequestBuilder {
    let strings = segments.map(\.description)
    return { request in
        var request = consume request
        request.appendPathSegments(strings)
        return request
    }
}

/// The builder for a URL whose non-ASCII host cannot be a host name.
private let invalidHost: RequestBuilder = { request in
    var request = consume request
    request.baseURL = nil
    request.record(
        RequestProblem(
            .invalidURL, "the URL has a non-ASCII host that is not a valid internationalized domain name (a space, punctuation or a label too long)"))
    return request
}
