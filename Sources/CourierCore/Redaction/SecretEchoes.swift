#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A request's own secret values, found where a server echoes them outside a text body: in a
/// response header (`X-Debug-Auth: Bearer …`, a `WWW-Authenticate` or `Location` that quotes
/// the token, a `Content-Type` parameter) or in a body that is not UTF-8 text.
///
/// Each value (sensitive header values and their credentials, cookie values, sensitive query
/// values, URL userinfo; 4 bytes or more, as ``BodyRedactor`` takes them) is searched for as
/// written, composed and decomposed (NFC, NFD), percent-encoded, and in every spelling a JSON
/// encoder writes; each of those in UTF-8, UTF-16 and UTF-32, in either byte order.
package struct SecretEchoes: Sendable {
    private let search: SecretSearch

    /// The echoes of `secrets`.
    init(secrets: [String]) {
        let values = secrets.filter { $0.utf8.count >= 4 && $0 != Redaction.placeholder }
        var patterns: [[UInt8]] = []
        for value in values {
            // An array, not a set: canonically equivalent strings compare equal, and their
            // bytes differ.
            var forms = value.canonicalSpellings
            forms.append(PercentEncoding.encode(value, allowed: .queryComponent))
            for spelling in forms.flatMap(BodyRedactor.jsonSpellings) {
                patterns.append(Array(spelling.utf8))
                patterns += Self.utf16And32(spelling)
            }
        }
        search = SecretSearch(patterns)
    }

    /// The echoes of the secret values `request` carries, with `extra` names sensitive too.
    package init(request: Request?, extra: Redaction = Redaction()) {
        self.init(secrets: request?.secretValues(extra: extra) ?? [])
    }

    /// `text` in UTF-16 and UTF-32, little- and big-endian, without a byte order mark.
    private static func utf16And32(_ text: String) -> [[UInt8]] {
        var little16: [UInt8] = []
        var big16: [UInt8] = []
        var little32: [UInt8] = []
        var big32: [UInt8] = []
        for unit in text.utf16 {
            little16 += [UInt8(truncatingIfNeeded: unit), UInt8(truncatingIfNeeded: unit >> 8)]
            big16 += [UInt8(truncatingIfNeeded: unit >> 8), UInt8(truncatingIfNeeded: unit)]
        }
        for scalar in text.unicodeScalars {
            let bytes = (0..<4).map { UInt8(truncatingIfNeeded: scalar.value >> (8 * $0)) }
            little32 += bytes
            big32 += bytes.reversed()
        }
        return [little16, big16, little32, big32]
    }

    /// Whether there is no value to look for.
    var isEmpty: Bool { search.isEmpty }

    /// Whether `bytes` hold a secret; when `cut`, also whether they end with the first 4 bytes or
    /// more of one (a body cut there may be cutting a secret).
    func occur(in bytes: [UInt8], cut: Bool = false) -> Bool {
        cut ? !search.occurrences(in: bytes, minimumCutLength: 4).isEmpty : search.occurs(in: bytes)
    }

    /// Whether `text` holds a secret, as it is or with its `%XX` escapes decoded (a URL may
    /// escape any byte, not only those it must).
    package func occur(in text: String) -> Bool {
        guard !search.isEmpty else { return false }
        if search.occurs(in: Array(text.utf8)) { return true }
        return text.utf8.contains(UInt8(ascii: "%")) && search.occurs(in: Array(PercentEncoding.decode(Substring(text)).utf8))
    }

    /// `text`, or ``Redaction/placeholder`` when it holds a secret.
    package func shown(_ text: String) -> String {
        occur(in: text) ? Redaction.placeholder : text
    }

    /// `headers` with every field whose value holds a secret marked sensitive: printed forms
    /// (descriptions, mirrors, logs, HAR files) show `<redacted>` for it; the value stays
    /// readable.
    package func marking(_ headers: HTTPHeaders) -> HTTPHeaders {
        guard !search.isEmpty else { return headers }
        var marked = headers
        for field in headers where !marked.sensitiveNames.contains(field.name) && occur(in: field.value) {
            marked.markSensitive(field.name)
        }
        return marked
    }
}

extension Response {
    /// This response with every header that echoes one of `request`'s secret values marked
    /// sensitive (``SecretEchoes/marking(_:)``), for showing it with its request (an error, a
    /// log, a recording), and with sensitive values replaced when `redaction` is given (as
    /// ``redactingHeaders(with:)`` does, in the same one conversion). Nothing is searched until
    /// the headers are read; without `redaction`, a transport's one-field lookup still answers
    /// without converting.
    func hidingEchoes(of request: Request?, extra: Redaction = Redaction(), redacting redaction: Redaction? = nil) -> Response {
        guard let request else { return redaction.map(redactingHeaders) ?? self }
        var shown = self
        let original = self
        let make: @Sendable () -> HTTPHeaders = {
            let marked = SecretEchoes(request: request, extra: extra).marking(original.headers)
            return redaction?.redacting(marked) ?? marked
        }
        // Redacted values are read from the conversion only; marked ones stay readable.
        let lookup: @Sendable (HeaderName) -> String? = { original.firstValue(of: $0) }
        let field = redaction == nil ? lookup : nil
        shown.headerStorage = .deferred(DeferredHeaders(make, field: field))
        return shown
    }
}
