import CourierCore

/// The Public Suffix List (https://publicsuffix.org): the domains under which anyone can
/// register a name of their own (`com`, `co.uk`, `github.io`, `myshopify.com`, every name
/// under `compute.amazonaws.com`), so that a cookie set for one would reach every site below it.
///
/// The whole list is compiled in (``rules``, made by `scripts/update-public-suffixes` from the
/// list's text): its ICANN and private sections, wildcard rules (`*.ck`: every name one label
/// under `ck`) and exceptions (`!www.ck`: not that one), Unicode labels as punycode. It is read
/// into sets the first time a cookie names a domain; nothing of it goes into a saved jar.
enum PublicSuffixList {
    /// The rules, split by kind: `plain` as written, `wildcards` without their `*.`, `exceptions`
    /// without their `!`.
    struct Rules: Sendable {
        var plain: Set<Substring> = []
        var wildcards: Set<Substring> = []
        var exceptions: Set<Substring> = []
    }

    /// ``rules`` read once, on first use.
    static let parsed: Rules = {
        var parsed = Rules()
        for line in rules.split(separator: "\n") {
            if line.hasPrefix("!") {
                parsed.exceptions.insert(line.dropFirst())
            } else if line.hasPrefix("*.") {
                parsed.wildcards.insert(line.dropFirst(2))
            } else {
                parsed.plain.insert(line)
            }
        }
        return parsed
    }()

    /// Whether `domain` (lowercase ASCII, no leading or trailing dot) is a public suffix by the
    /// list's algorithm: an exception rule makes it a registrable name; otherwise a rule naming
    /// it, a wildcard rule naming its parent, or (the list's implicit `*`) having one label makes
    /// it a suffix.
    static func isPublicSuffix(_ domain: Substring) -> Bool {
        let rules = parsed
        if rules.exceptions.contains(domain) { return false }
        if rules.plain.contains(domain) { return true }
        guard let dot = domain.firstIndex(of: ".") else { return true }
        return rules.wildcards.contains(domain[domain.index(after: dot)...])
    }
}
