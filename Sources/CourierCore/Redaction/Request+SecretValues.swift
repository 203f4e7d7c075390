#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension Request {
    /// The secret values this request carries, for hiding them where a server echoes them:
    /// values of sensitive headers (and the credential after an auth scheme), cookie values,
    /// sensitive query values and URL userinfo.
    func secretValues(extra: Redaction = Redaction()) -> [String] {
        let policy = redaction.merging(extra)
        var values: [String] = []
        for field in headers where policy.isSensitive(header: field.name) || headers.sensitiveNames.contains(field.name) {
            values.append(field.value)
            let parts = field.value.split(separator: " ", maxSplits: 1)
            if parts.count == 2 { values.append(String(parts[1]).trimmingWhitespace()) }
            if field.name == .cookie {
                // On bytes: a ";" or "=" followed by a combining mark is one Character.
                for pair in field.value.utf8.split(separator: UInt8(ascii: ";")) {
                    if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
                        values.append(String(decoding: pair[pair.index(after: equals)...], as: UTF8.self))
                    }
                }
            }
        }
        for item in queryItems where item.value != nil && policy.isSensitive(queryName: item.decodedName) {
            if let value = item.value {
                values.append(value)
                // The other spelling too: an echo shows the value decoded (a JSON body) or
                // encoded (a URL).
                values.append(
                    item.isPercentEncoded
                        ? PercentEncoding.decode(Substring(value)) : PercentEncoding.encode(value, allowed: .queryComponent))
            }
        }
        if let baseURL {
            if let password = baseURL.password { values.append(password) }
            if let items = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)?.queryItems {
                for item in items where policy.isSensitive(queryName: item.name) { values.append(item.value ?? "") }
            }
        }
        return values.map { $0.trimmingWhitespace() }
    }
}
