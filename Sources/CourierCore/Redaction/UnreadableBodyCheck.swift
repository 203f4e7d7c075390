import Foundation

/// Whether a body the ``BodyRedactor`` cannot read may still be shown as it is (in base64, in
/// a redacted HAR file).
///
/// The redactor reads UTF-8 text. Other bytes are shown only when they are data, not text, and
/// hold none of the request's secret values in UTF-8, UTF-16 or UTF-32 (either byte order, each
/// spelling the redactor searches for). A body that holds one, or that is text in another
/// encoding (its sensitive fields were never read), is left out, and the reason says why.
///
/// What it cannot know: a secret of a binary format's own (a token a server puts in a protobuf
/// message), or text in UTF-16 with nothing that says so. Only leaving bodies out is sure.
struct UnreadableBodyCheck: Sendable {
    /// Every spelling of every secret value, in every encoding above, as bytes.
    private let search: SecretSearch

    /// A check for the secret values `secrets` (values shorter than 4 bytes are not searched,
    /// as with ``BodyRedactor``).
    init(secrets: [String]) {
        let values = secrets.filter { $0.utf8.count >= 4 && $0 != Redaction.placeholder }
        var patterns: [[UInt8]] = []
        for value in values {
            // As written, composed and decomposed; an array, not a set: canonically equivalent
            // strings compare equal, and their bytes differ.
            let forms = [value, value.precomposedStringWithCanonicalMapping, value.decomposedStringWithCanonicalMapping]
            for spelling in forms.flatMap(BodyRedactor.jsonSpellings) {
                patterns.append(Array(spelling.utf8))
                patterns += Self.utf16And32(spelling)
            }
        }
        search = SecretSearch(patterns)
    }

    /// The check for bodies exchanged for `request`: its secret values, with `extra` names.
    init(request: Request?, extra: Redaction = Redaction()) {
        self.init(secrets: request?.secretValues(extra: extra) ?? [])
    }

    /// `text` in UTF-16 and UTF-32, little- and big-endian, without a byte order mark.
    private static func utf16And32(_ text: String) -> [[UInt8]] {
        var little16: [UInt8] = [], big16: [UInt8] = [], little32: [UInt8] = [], big32: [UInt8] = []
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

    /// Why `body` must not be shown, or `nil` when it may be.
    /// - Parameters:
    ///   - body: A body that is not UTF-8 text.
    ///   - type: Its `Content-Type`, or an empty string.
    ///   - truncated: Whether `body` is the start of a longer one: then an end that is the
    ///     first 4 bytes or more of a secret is a secret cut in two.
    func reasonToWithhold(_ body: Data, type: String, truncated: Bool = false) -> String? {
        let bytes = [UInt8](body)
        let holdsASecret =
            truncated ? !search.occurrences(in: bytes, minimumCutLength: 4).isEmpty : search.occurs(in: bytes)
        if holdsASecret { return "it holds a secret of the request" }
        if Self.isText(bytes, type: type) { return "text that is not UTF-8, which the redactor does not read" }
        return nil
    }

    /// Whether `bytes` are text (in an encoding the redactor does not read): a media type of
    /// text or of a text format, or with a `charset`; a byte order mark of UTF-16 or UTF-32; or
    /// JSON as Foundation reads it (it tells UTF-16 and UTF-32 from where the NUL bytes are).
    static func isText(_ bytes: [UInt8], type: String) -> Bool {
        let parameters = HTTPSyntax.parts(of: type, separatedBy: UInt8(ascii: ";")).dropFirst()
        if parameters.contains(where: { HTTPSyntax.asciiLowercased(HTTPSyntax.nameAndValue(of: $0).name) == "charset" }) {
            return true
        }
        let essence = MediaType(rawValue: type).essence
        let kind = essence.split(separator: "/", maxSplits: 1).first ?? ""
        if ["text", "multipart", "message"].contains(kind) { return true }
        if ["json", "xml", "yaml", "javascript", "ecmascript", "x-www-form-urlencoded", "graphql"].contains(where: { essence.contains($0) }) {
            return true
        }
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0, 0, 0xFE, 0xFF]) {
            return true
        }
        // Foundation's reader finds UTF-16 or UTF-32 JSON by the NUL bytes among the first
        // four; without one it reads UTF-8, which this body is not.
        guard bytes.prefix(4).contains(0) else { return false }
        return (try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])) != nil
    }
}
