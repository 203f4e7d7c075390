/// Decides whether a name (a header, a query parameter, a form or JSON field) holds a secret, by
/// the words it is made of rather than by exact spelling.
///
/// A name is split into lower-cased words at `_`, `-`, `.`, spaces, brackets (also
/// percent-encoded, `%5B`/`%5D`) and camelCase boundaries: `user[new_password]`,
/// `user%5Bpassword%5D`, `newPassword`, `X-API-Key` and `password_confirmation` all contain a
/// secret word. It is sensitive when
/// - any word is one of ``secretWords`` (`password`, `secret`, `token`, `cookie`, …),
/// - two neighbouring words form a secret pair (`api key`, `access key`, `private key`,
///   `session id`),
/// - the whole name, with separators removed, is one of ``secretNames`` (`key`, `sid`, …),
/// - or it ends in one of the caller's extra names (compared the same way, so an extra
///   `ssn` hides `ssn`, `SSN` and `user[ssn]`).
enum SensitiveName {
    /// Words that make any name containing them sensitive.
    static let secretWords: Set<String> = [
        "password", "passwd", "passphrase", "pwd", "pass", "secret", "secrets", "token", "tokens", "credential",
        "credentials", "cookie", "cookies", "authorization", "auth", "signature", "sig", "apikey", "sessionid",
        "csrf", "xsrf", "otp", "pin", "jwt", "bearer",
    ]

    /// Neighbouring word pairs that make a name sensitive.
    static let secretPairs: Set<String> = ["api key", "access key", "private key", "session id", "client key"]

    /// Whole names (separators removed) that are sensitive on their own.
    static let secretNames: Set<String> = ["key", "sid", "code"]

    /// Whether `name` is sensitive, given extra names already passed through ``compact(_:)``.
    static func isSensitive(_ name: String, extra: Set<String> = []) -> Bool {
        let words = self.words(name)
        guard !words.isEmpty else { return false }
        for word in words where secretWords.contains(word) { return true }
        for index in words.indices.dropFirst() where secretPairs.contains(words[index - 1] + " " + words[index]) {
            return true
        }
        if secretNames.contains(words.joined()) { return true }
        guard !extra.isEmpty else { return false }
        var suffix = ""
        for word in words.reversed() {
            suffix = word + suffix
            if extra.contains(suffix) { return true }
        }
        return false
    }

    /// `name` as one lower-case word without separators, for comparing extra names.
    static func compact(_ name: String) -> String { words(name).joined() }

    /// The lower-cased words of `name`.
    static func words(_ name: String) -> [String] {
        var words: [String] = []
        var current: [UInt8] = []
        var previous: UInt8 = 0
        let bytes = Array(decodingBrackets(name).utf8)
        func flush() {
            if !current.isEmpty { words.append(String(decoding: current, as: UTF8.self)) }
            current.removeAll(keepingCapacity: true)
        }
        for (index, byte) in bytes.enumerated() {
            let isUpper = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
            let isLower = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            guard isUpper || isLower || isDigit || byte >= 0x80 else {
                flush()
                previous = byte
                continue
            }
            if isUpper {
                // A letter outside ASCII counts as lowercase here: its case is unknown, and a
                // capital after it starting a word can only hide more (`ÄToken` → ä|Token).
                let previousIsLower = (previous >= UInt8(ascii: "a") && previous <= UInt8(ascii: "z"))
                    || (previous >= UInt8(ascii: "0") && previous <= UInt8(ascii: "9")) || previous >= 0x80
                let previousIsUpper = previous >= UInt8(ascii: "A") && previous <= UInt8(ascii: "Z")
                let nextIsLower = index + 1 < bytes.count && bytes[index + 1] >= UInt8(ascii: "a") && bytes[index + 1] <= UInt8(ascii: "z")
                // "newPassword" → new|Password; "APIKey" → API|Key.
                if previousIsLower || (previousIsUpper && nextIsLower) { flush() }
                current.append(byte + 32)
            } else {
                current.append(byte)
            }
            previous = byte
        }
        flush()
        return words
    }

    /// `name` with percent-encoded brackets and separators decoded, so that
    /// `user%5Bpassword%5D` reads as `user[password]`.
    private static func decodingBrackets(_ name: String) -> String {
        guard name.utf8.contains(UInt8(ascii: "%")) else { return name }
        return PercentEncoding.decode(Substring(name))
    }
}
