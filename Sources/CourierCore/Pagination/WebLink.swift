#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One link of a `Link` header ([RFC 8288](https://www.rfc-editor.org/rfc/rfc8288)):
/// `<https://api.test/items?page=3>; rel="next"`.
public struct WebLink: Sendable, Hashable {
    /// The target as written between `<` and `>`; it may be relative to the response's URL.
    public var target: String
    /// The parameters in order, names lower-cased, values unquoted.
    public var parameters: [Parameter]

    /// A link parameter such as `rel="next"`.
    public struct Parameter: Sendable, Hashable {
        /// The name, lower-cased (parameter names are case-insensitive).
        public var name: String
        /// The value without quotes or escapes; `nil` for a parameter written without `=`.
        public var value: String?

        /// Creates a parameter.
        /// - Parameters:
        ///   - name: The name.
        ///   - value: The value.
        public init(name: String, value: String?) {
            self.name = HTTPSyntax.asciiLowercased(name)
            self.value = value
        }
    }

    /// Creates a link.
    /// - Parameters:
    ///   - target: The target URI reference.
    ///   - parameters: The parameters.
    public init(target: String, parameters: [Parameter] = []) {
        self.target = target
        self.parameters = parameters
    }

    /// The relation types of the first `rel` parameter, lower-cased (RFC 8288 §3.3: a link
    /// may have several, separated by spaces, and only the first `rel` counts).
    public var relations: [String] {
        guard let rel = parameters.first(where: { $0.name == "rel" })?.value else { return [] }
        // Split on bytes: a space and a combining mark after it are one Character.
        return rel.utf8.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
            .map { HTTPSyntax.asciiLowercased(String(Substring($0))) }
    }

    /// The target resolved against `base`, or `nil` when it does not form an absolute `http` or
    /// `https` URL, or is one that URL parsers would read as different hosts (a backslash,
    /// whitespace, a percent-escape in the host, …).
    /// - Parameter base: The URL the link was received from.
    /// - Returns: The absolute URL.
    public func url(relativeTo base: URL?) -> URL? {
        try? URLSyntax.resolve(target, against: base).get()
    }

    /// Parses the value of one `Link` header field. Malformed links are skipped; parsing never
    /// fails.
    /// - Parameter field: The field value, which may hold several comma-separated links.
    /// - Returns: The links in order.
    public static func parse(_ field: String) -> [WebLink] {
        var scanner = LinkScanner(Array(field.utf8))
        var links: [WebLink] = []
        while let link = scanner.nextLink() { links.append(link) }
        return links
    }
}

extension Response {
    /// The links of every `Link` header field, in order.
    public var links: [WebLink] {
        headers.values(for: "Link").flatMap(WebLink.parse)
    }

    /// The absolute URL of the first link with relation type `relation`, resolved against the
    /// response's URL.
    /// - Parameter relation: A relation type such as `next`, compared case-insensitively.
    /// - Returns: The URL, or `nil` when there is no such link.
    public func link(_ relation: String) -> URL? {
        let wanted = HTTPSyntax.asciiLowercased(relation)
        return links.first { $0.relations.contains(wanted) }?.url(relativeTo: url)
    }
}

/// A forgiving byte scanner for the `Link` grammar: `#link-value`, where
/// `link-value = "<" URI-Reference ">" *( OWS ";" OWS link-param )`.
private struct LinkScanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
    }

    /// Skips to just after the next top-level comma (outside quotes and angle brackets).
    private mutating func skipToNextValue() {
        var quoted = false
        while let byte = current {
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { quoted = false }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                return
            }
        }
    }

    mutating func nextLink() -> WebLink? {
        while true {
            skipWhitespace()
            guard let byte = current else { return nil }
            if byte == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "<"), let end = bytes[(index + 1)...].firstIndex(of: UInt8(ascii: ">")) else {
                skipToNextValue()
                continue
            }
            let target = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
                .trimmingOptionalWhitespace()
            index = end + 1
            var parameters: [WebLink.Parameter] = []
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: ";") else { break }
                index += 1
                skipWhitespace()
                if let parameter = nextParameter() { parameters.append(parameter) }
            }
            skipWhitespace()
            if current != nil && current != UInt8(ascii: ",") { skipToNextValue() }
            return WebLink(target: target, parameters: parameters)
        }
    }

    private mutating func nextParameter() -> WebLink.Parameter? {
        let start = index
        while let byte = current, HTTPSyntax.isTokenByte(byte) || byte == UInt8(ascii: "*") { index += 1 }
        guard index > start else { return nil }
        let name = String(decoding: bytes[start..<index], as: UTF8.self)
        skipWhitespace()
        guard current == UInt8(ascii: "=") else { return WebLink.Parameter(name: name, value: nil) }
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "\"") {
            index += 1
            var value: [UInt8] = []
            while let byte = current {
                index += 1
                if byte == UInt8(ascii: "\\"), let escaped = current {
                    value.append(escaped)
                    index += 1
                } else if byte == UInt8(ascii: "\"") {
                    break
                } else {
                    value.append(byte)
                }
            }
            return WebLink.Parameter(name: name, value: String(decoding: value, as: UTF8.self))
        }
        let valueStart = index
        while let byte = current, byte != UInt8(ascii: ";"), byte != UInt8(ascii: ","),
            byte != UInt8(ascii: " "), byte != UInt8(ascii: "\t")
        {
            index += 1
        }
        return WebLink.Parameter(name: name, value: String(decoding: bytes[valueStart..<index], as: UTF8.self))
    }
}
