#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Request {
    /// Every problem that stops this request from being sent: those recorded by builders plus
    /// those found by checking the current method, URL, path segments, headers and timeout.
    ///
    /// Empty for a valid request.
    public var problems: [RequestProblem] {
        var found = recordedProblems
        collectStructuralProblems(into: &found)
        return found
    }

    /// The absolute URL as logs, metrics and traces may show it: userinfo and the values of
    /// sensitive query parameters (the standard ones and ``redaction``'s) replaced by
    /// ``Redaction/placeholder``; `nil` without a base URL. For `url.full` in structured logs and
    /// spans.
    public var redactedURLString: String? { urlString(redacting: redaction) }

    /// The origin-form target (`/path?query`) as it appears on the request line.
    /// - Parameter redaction: When given, sensitive query values are replaced by a placeholder.
    func target(redacting redaction: Redaction?) -> String {
        guard let full = urlString(redacting: redaction) else {
            return renderedPathAndQuery(basePath: "", baseQuery: nil, redacting: redaction)
        }
        // Skip "scheme://authority", reading bytes (a search by Character would run grapheme
        // breaking over the whole URL, on every in-memory route match).
        let bytes = full.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            bytes[colon...].starts(with: "://".utf8)
        else { return full }
        let authority = bytes.index(colon, offsetBy: 3)
        guard let start = bytes[authority...].firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) else { return "/" }
        let target = String(full[start...])
        return bytes[start] == UInt8(ascii: "?") ? "/" + target : target
    }

    /// The absolute URL as a string, or `nil` when there is no base URL.
    /// - Parameter redaction: When given, userinfo and sensitive query values are hidden.
    package func urlString(redacting redaction: Redaction?) -> String? {
        guard let baseURL else { return nil }
        if redaction == nil, let plain = plainURLString(baseURL) { return plain }
        return composedURLString(baseURL, redacting: redaction)
    }

    /// The absolute URL built part by part, hiding what `redaction` says to hide; the same
    /// string as `plainURLString(_:)` when `redaction` is `nil`.
    func composedURLString(_ baseURL: URL, redacting redaction: Redaction?) -> String {
        var base = baseURL.absoluteString
        // Byte scans: searching Characters would run grapheme breaking over the whole URL.
        if let hash = base.utf8.firstIndex(of: UInt8(ascii: "#")) { base = String(base[..<hash]) }
        var baseQuery: Substring?
        if let mark = base.utf8.firstIndex(of: UInt8(ascii: "?")) {
            baseQuery = base[base.utf8.index(after: mark)...]
            base = String(base[..<mark])
        }
        if redaction != nil { base = Self.hidingUserInfo(in: base) }
        return renderedPathAndQuery(basePath: base, baseQuery: baseQuery, redacting: redaction)
    }

    /// The absolute URL as sent: the base URL without its fragment, the encoded path segments,
    /// the base URL's query and the encoded query items, written into one scratch buffer and
    /// copied once into the string (every request is sent with it; a growing `String` costs
    /// several times more).
    /// - Returns: The string, or `nil` for a URL too large for the scratch buffer (or one that
    ///   did not fit its bound, never expected); the caller then composes it part by part.
    /// The largest scratch buffer `plainURLString(_:)` takes (1 MiB; URLs are rarely over 8 KB).
    static let scratchLimit = 1 << 20

    private func plainURLString(_ baseURL: URL) -> String? {
        var base = baseURL.absoluteString
        return base.withUTF8 { base -> String? in
            let end = base.firstIndex(of: UInt8(ascii: "#")) ?? base.count
            let mark = base[..<end].firstIndex(of: UInt8(ascii: "?"))
            var pathEnd = mark ?? end
            if !pathSegments.isEmpty, pathEnd > 0, base[pathEnd - 1] == UInt8(ascii: "/") { pathEnd -= 1 }
            let baseQuery = mark.map { ($0 + 1)..<end } ?? end..<end

            // An upper bound: every byte of a part may become three.
            // By index throughout: reading the strings in place spares a retain and a release each.
            let segments = pathSegments
            let items = queryItems
            var bound = pathEnd + baseQuery.count + 1
            for index in segments.indices { bound += 1 + 3 * segments[index].utf8.count }
            for index in items.indices {
                bound += 2 + 3 * (items[index].name.utf8.count + (items[index].value?.utf8.count ?? 0))
            }
            // A scratch buffer three times a huge URL is not worth it: compose those part by part.
            guard bound <= Self.scratchLimit else { return nil }

            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: bound) { buffer -> String? in
                var out = ByteWriter(buffer)
                out.append(base[..<pathEnd])
                for index in segments.indices {
                    out.append(UInt8(ascii: "/"))
                    out.append(segments[index], allowed: .pathSegment)
                }
                var separator = UInt8(ascii: "?")
                if !baseQuery.isEmpty {
                    out.append(separator)
                    out.append(base[baseQuery])
                    separator = UInt8(ascii: "&")
                }
                for index in items.indices {
                    out.append(separator)
                    separator = UInt8(ascii: "&")
                    let encoding = !items[index].isPercentEncoded
                    out.append(items[index].name, allowed: .queryComponent, encoding: encoding)
                    guard items[index].value != nil else { continue }
                    out.append(UInt8(ascii: "="))
                    out.append(items[index].value ?? "", allowed: .queryComponent, encoding: encoding)
                }
                return out.overflowed ? nil : String(decoding: out.written, as: UTF8.self)
            }
        }
    }

    private func renderedPathAndQuery(basePath: String, baseQuery: Substring?, redacting redaction: Redaction?)
        -> String
    {
        var output = basePath
        if !pathSegments.isEmpty {
            if output.hasSuffix("/") { output.removeLast() }
            for segment in pathSegments {
                output += "/"
                output += PercentEncoding.encode(segment, allowed: .pathSegment)
            }
        }
        var separator = "?"
        if let baseQuery, !baseQuery.isEmpty {
            output += separator
            output += redaction.map { Self.redactingEncodedQuery(baseQuery, with: $0) } ?? String(baseQuery)
            separator = "&"
        }
        for item in queryItems {
            output += separator
            separator = "&"
            output += item.isPercentEncoded ? item.name : PercentEncoding.encode(item.name, allowed: .queryComponent)
            guard let value = item.value else { continue }
            output += "="
            if let redaction, redaction.isSensitive(queryName: item.decodedName) {
                output += Redaction.placeholder
            } else {
                output += item.isPercentEncoded ? value : PercentEncoding.encode(value, allowed: .queryComponent)
            }
        }
        return output
    }

    private static func redactingEncodedQuery(_ query: Substring, with redaction: Redaction) -> String {
        query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = PercentEncoding.decode(pair[..<equals])
            return redaction.isSensitive(queryName: name) ? "\(pair[..<equals])=\(Redaction.placeholder)" : String(pair)
        }.joined(separator: "&")
    }

    /// `url` as a string with userinfo and the values of sensitive query (and fragment)
    /// parameters replaced by ``Redaction/placeholder``.
    package static func redactedURLString(_ url: URL, redaction: Redaction = .standard) -> String {
        var string = hidingUserInfo(in: url.absoluteString)
        var fragment: String?
        if let hash = string.firstIndex(of: "#") {
            fragment = String(string[string.index(after: hash)...])
            string = String(string[..<hash])
        }
        if let mark = string.firstIndex(of: "?") {
            string = String(string[...mark]) + redactingEncodedQuery(string[string.index(after: mark)...], with: redaction)
        }
        if let fragment { string += "#" + redactingEncodedQuery(Substring(fragment), with: redaction) }
        return string
    }

    private static func hidingUserInfo(in url: String) -> String {
        guard let schemeEnd = url.firstRange(of: "://") else { return url }
        let authorityEnd = url[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[schemeEnd.upperBound..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd.upperBound]) + Redaction.placeholder + String(url[at...])
    }

    /// Why a parsed host (percent-escapes already decoded by Foundation) is not one every parser
    /// reads alike, or `nil`.
    private static func hostDefect(_ host: String) -> String? {
        for byte in host.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
                continue
            case 0x80...:
                return "is not ASCII: write it in its ASCII (xn--) form"
            default:
                return "contains a character not allowed in a host name (byte 0x\(String(byte, radix: 16)))"
            }
        }
        return nil
    }

    /// The problems of a base URL on its own: scheme, host, fragment.
    static func baseURLProblems(_ baseURL: URL) -> [RequestProblem] {
        var found: [RequestProblem] = []
        let scheme = baseURL.scheme.map(HTTPSyntax.asciiLowercased)
        if scheme != "http" && scheme != "https" {
            found.append(RequestProblem(.invalidURL, "the URL scheme must be http or https, not \(scheme ?? "none")"))
        } else if let host = baseURL.host, !host.isEmpty {
            // Read once: URL.host decodes on every call.
            if let defect = Self.hostDefect(host) { found.append(RequestProblem(.invalidURL, "the URL's host \(defect)")) }
        } else {
            found.append(RequestProblem(.invalidURL, "the URL has no host"))
        }
        if baseURL.fragment != nil {
            found.append(RequestProblem(.invalidURL, "the base URL has a fragment (#…), which is never sent"))
        }
        return found
    }

    private func collectStructuralProblems(into found: inout [RequestProblem]) {
        if let baseURL {
            // The URL builders check a URL once, when they are made; a base URL set another way
            // is checked here.
            if let checked = baseURLCheck.url, checked == baseURL {
                found.append(contentsOf: baseURLCheck.problems)
            } else {
                found.append(contentsOf: Self.baseURLProblems(baseURL))
            }
        } else {
            found.append(RequestProblem(.missingURL, "the request has no URL: add baseURL(_:) or url(_:)"))
        }
        if !method.isValid {
            found.append(
                RequestProblem(.invalidMethod, "the method is not a valid token (RFC 9110 §9.1): \(method.rawValue.debugDescription)"))
        }
        // By index, reading in place: most requests pass, and copying each element out would
        // cost a retain and a release per string.
        let segments = pathSegments
        for index in segments.indices where segments[index].utf8.count <= 2 {
            let segment = segments[index]
            guard segment.isEmpty || segment == "." || segment == ".." else { continue }
            let shown = segment.isEmpty ? "an empty segment" : "\"\(segment)\""
            found.append(
                RequestProblem(.invalidPathSegment, "path segment \(index) is \(shown), which would change the path"))
        }
        let items = queryItems
        for index in items.indices where items[index].isPercentEncoded {
            let item = items[index]
            if !PercentEncoding.isValidEncoded(item.name, allowed: .encodedQueryName)
                || !(item.value.map { PercentEncoding.isValidEncoded($0, allowed: .encodedQueryValue) } ?? true)
            {
                found.append(
                    RequestProblem(
                        .invalidQuery,
                        "pre-encoded query item \(index) may hold only query characters and %XX escapes; "
                            + "'&', '#', ';', spaces and bare '%' would change the query"))
            }
        }
        // By index: reading names and values in place spares copying each field.
        let fields = headers.fields
        var hasFramingNames = false
        for index in fields.indices {
            hasFramingNames = hasFramingNames || fields[index].name.framingRole != .none
            if !fields[index].name.isValid {
                let name = fields[index].name.rawValue
                found.append(RequestProblem(.invalidHeaderName, "header name \(name.debugDescription) is not a valid token"))
            } else if let defect = HTTPSyntax.headerValueDefect(fields[index].value) {
                found.append(RequestProblem(.invalidHeaderValue, "the value of header \(fields[index].name.rawValue) \(defect)"))
            }
        }
        if hasFramingNames { collectFramingProblems(into: &found) }
        if method == .get || method == .head, bodySource != nil || !(body?.isEmpty ?? true) {
            // URLSession refuses such a request on every platform with a misleading "resource
            // exceeds maximum size" (-1103), or drops the body; say what is wrong instead.
            found.append(
                RequestProblem(
                    .invalidFraming,
                    "a \(method.rawValue) request cannot carry a body (URLSession refuses it); send the data in the query, or use POST"))
        }
        if let timeout, !(timeout > 0 && timeout.isFinite) {
            found.append(RequestProblem(.invalidTimeout, "the timeout must be a positive number of seconds, not \(timeout)"))
        }
        if let deadline, !(deadline > 0 && deadline.isFinite) {
            found.append(RequestProblem(.invalidTimeout, "the deadline must be a positive number of seconds, not \(deadline)"))
        }
    }
}

extension Request {
    /// The percent-encoded path as sent, without the query: `/v1/users/a%2Fb`.
    public var path: String {
        let target = target(redacting: nil)
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target }
        return String(target[..<mark])
    }
}
