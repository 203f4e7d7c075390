#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Whether a body the ``BodyRedactor`` cannot read may still be shown as it is (in base64, in
/// a redacted HAR file).
///
/// The redactor reads UTF-8 text. Other bytes are shown only when they are data, not text, and
/// hold none of the request's secret values in UTF-8, UTF-16 or UTF-32 (``SecretEchoes``). A
/// body that holds one, or that is text in another encoding (its sensitive fields were never
/// read), is left out, and the reason says why.
///
/// What it cannot know: a secret of a binary format's own (a token a server puts in a protobuf
/// message), or text in UTF-16 with nothing that says so. Only leaving bodies out is sure.
package struct UnreadableBodyCheck: Sendable {
    /// The request's secret values in every encoding and spelling.
    private let echoes: SecretEchoes

    /// The check for bodies exchanged for the request whose secret values are `echoes`.
    package init(echoes: SecretEchoes) {
        self.echoes = echoes
    }

    /// Why `body` must not be shown, or `nil` when it may be.
    /// - Parameters:
    ///   - body: A body that is not UTF-8 text.
    ///   - type: Its `Content-Type`, or an empty string.
    ///   - truncated: Whether `body` is the start of a longer one: then an end that is the
    ///     first 4 bytes or more of a secret is a secret cut in two.
    package func reasonToWithhold(_ body: Data, type: String, truncated: Bool = false) -> String? {
        let bytes = [UInt8](body)
        if echoes.occur(in: bytes, cut: truncated) { return "it holds a secret of the request" }
        if Self.isText(bytes, type: type) { return "text that is not UTF-8, which the redactor does not read" }
        return nil
    }

    /// Whether `bytes` are text (in an encoding the redactor does not read): a media type of
    /// text or of a text format, or with a `charset`; a byte order mark of UTF-16 or UTF-32; or
    /// JSON as Foundation reads it (it tells UTF-16 and UTF-32 from where the NUL bytes are).
    static func isText(_ bytes: [UInt8], type: String) -> Bool {
        // Any charset but `binary` (which some servers send for data) says the body is text.
        for parameter in HTTPSyntax.parts(of: type, separatedBy: UInt8(ascii: ";")).dropFirst() {
            let (name, value) = HTTPSyntax.nameAndValue(of: parameter)
            let charset = HTTPSyntax.asciiLowercased((value ?? "").replacingAll("\"", with: ""))
            if HTTPSyntax.asciiLowercased(name) == "charset", charset != "binary" { return true }
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
        return JSONValue.decode(Data(bytes)) != nil
    }
}
