#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Request {
    /// Adds a problem for every header that would let the caller change how the message is
    /// framed or routed, which the transport must own.
    ///
    /// A `Content-Length` that disagrees with the body would let a server read the rest of the
    /// body as a second request (request smuggling); the rules below keep every header that
    /// frames or routes the message consistent with the request itself:
    /// - `Content-Length`: allowed only as the exact byte count of the body (`0` or absent for no
    ///   body); repeated fields must agree.
    /// - `Transfer-Encoding`, `Trailer`, `Upgrade`, `Proxy-Connection`: refused; the transport
    ///   frames the body and Courier speaks no upgraded protocol.
    /// - `TE`: only `trailers`.
    /// - `Connection`: only `close` or `keep-alive`; other tokens would make named headers
    ///   hop-by-hop, so a proxy would strip them.
    /// - `Host`: only the URL's own host and port; the URL decides where a request goes.
    func collectFramingProblems(into found: inout [RequestProblem]) {
        for field in headers.fields {
            switch field.name.framingRole {
            case .contentLength:
                // A body read at send time is checked against the length knowable now (a file's
                // size); the transport sets the header from the file it uploads anyway.
                let expected: Int64? = if let bodySource { bodySource.knownLength } else { Int64(body?.count ?? 0) }
                let value = HTTPSyntax.trimmed(field.value)
                let digits = !value.isEmpty && value.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                if !digits || Int64(value) != expected {
                    found.append(
                        RequestProblem(
                            .invalidFraming,
                            "Content-Length \(value.count <= 20 ? value.debugDescription : "(\(value.count) characters)") "
                                + "does not match the body's \(expected.map { "\($0)" } ?? "unknown number of") bytes; "
                                + "leave it out and the transport sets it"))
                }
            case .transferEncoding:
                found.append(
                    RequestProblem(.invalidFraming, "Transfer-Encoding is set by the transport, never by the caller"))
            case .trailer:
                found.append(RequestProblem(.invalidFraming, "Trailer announces trailer fields, which Courier never sends"))
            case .upgrade:
                found.append(RequestProblem(.invalidFraming, "Upgrade asks to switch protocols, which Courier does not speak"))
            case .proxyConnection:
                found.append(RequestProblem(.invalidFraming, "Proxy-Connection is an obsolete hop-by-hop header"))
            case .te:
                if !Self.tokens(field.value).allSatisfy({ $0 == "trailers" }) {
                    found.append(RequestProblem(.invalidFraming, "TE may only be \"trailers\""))
                }
            case .connection:
                if !Self.tokens(field.value).allSatisfy({ $0 == "close" || $0 == "keep-alive" }) {
                    found.append(
                        RequestProblem(
                            .invalidFraming,
                            "Connection may only be \"close\" or \"keep-alive\"; other names would make those headers hop-by-hop"
                        ))
                }
            case .host:
                if !hostHeaderMatchesURL(field.value) {
                    found.append(
                        RequestProblem(
                            .invalidFraming,
                            "Host names another authority than the URL; set the URL's host instead (the URL decides where a request goes)"))
                }
            case .none:
                continue
            }
        }
    }

    private static func tokens(_ value: String) -> [String] {
        HTTPSyntax.parts(of: value, separatedBy: UInt8(ascii: ",")).map(HTTPSyntax.asciiLowercased)
    }

    /// Whether a `Host` value names the URL's own host and port (the default port may be left
    /// out or written).
    private func hostHeaderMatchesURL(_ value: String) -> Bool {
        guard let baseURL, let host = baseURL.host else { return false }
        let scheme = baseURL.scheme.map(HTTPSyntax.asciiLowercased) ?? "http"
        let defaultPort = scheme == "https" ? 443 : 80
        let port = baseURL.port ?? defaultPort
        let shownHost = host.contains(":") ? "[\(host)]" : host
        var accepted = ["\(shownHost):\(port)"]
        if port == defaultPort { accepted.append(shownHost) }
        let given = HTTPSyntax.asciiLowercased(value.trimmingOptionalWhitespace())
        return accepted.contains { HTTPSyntax.asciiLowercased($0) == given }
    }
}
