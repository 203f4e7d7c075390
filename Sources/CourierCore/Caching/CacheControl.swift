import Foundation

/// The directives of `Cache-Control` fields, of a request or a response
/// ([RFC 9111 §5.2](https://www.rfc-editor.org/rfc/rfc9111#section-5.2)), as a cache reads them.
///
/// Directive names compare case-insensitively; values may be tokens or quoted strings. A
/// directive whose delta-seconds is not a number, or that appears twice with different values,
/// reads as `0` (RFC 9111 §4.2.1: such a response is stale), so a malformed field never makes a
/// response fresher than it is. Numbers too large for an `Int` read as `Int.max`.
public struct CacheControl: Sendable, Hashable {
    /// `max-age`: seconds a response stays fresh, or (request) the oldest response accepted.
    public var maxAge: Int?
    /// `s-maxage`: the freshness a shared cache uses instead of `max-age`.
    public var sharedMaxAge: Int?
    /// `max-stale` (request): stale responses accepted, by how much (`Int.max` when no value).
    public var maxStale: Int?
    /// `min-fresh` (request): seconds a response must stay fresh for.
    public var minFresh: Int?
    /// `stale-while-revalidate` ([RFC 5861](https://www.rfc-editor.org/rfc/rfc5861)).
    public var staleWhileRevalidate: Int?
    /// `stale-if-error` ([RFC 5861](https://www.rfc-editor.org/rfc/rfc5861)).
    public var staleIfError: Int?
    /// `no-store`.
    public var noStore = false
    /// `no-cache`: reuse only after validating with the origin.
    public var noCache = false
    /// `private`: only a private cache may store the response.
    public var isPrivate = false
    /// `public`.
    public var isPublic = false
    /// `must-revalidate`: never served stale.
    public var mustRevalidate = false
    /// `proxy-revalidate`: never served stale by a shared cache.
    public var proxyRevalidate = false
    /// `immutable` ([RFC 8246](https://www.rfc-editor.org/rfc/rfc8246)): not revalidated while fresh.
    public var immutable = false
    /// `only-if-cached` (request): answer from the cache or with `504`.
    public var onlyIfCached = false
    /// `no-transform`.
    public var noTransform = false

    /// Reads the directives of every `Cache-Control` field value given.
    /// - Parameter values: The field values, in order.
    public init(_ values: [String]) {
        var seen: [String: String?] = [:]
        for value in values {
            for (name, argument) in Self.directives(value) {
                if let earlier = seen[name], earlier != argument {
                    // Two different values: the most cautious reading.
                    seen[name] = .some("0")
                } else {
                    seen[name] = .some(argument)
                }
            }
        }
        func seconds(_ name: String) -> Int? {
            guard let entry = seen[name] else { return nil }
            return Self.deltaSeconds(entry) ?? 0
        }
        maxAge = seconds("max-age")
        sharedMaxAge = seconds("s-maxage")
        if let entry = seen["max-stale"] { maxStale = entry == nil ? Int.max : Self.deltaSeconds(entry) ?? 0 }
        minFresh = seconds("min-fresh")
        staleWhileRevalidate = seconds("stale-while-revalidate")
        staleIfError = seconds("stale-if-error")
        noStore = seen["no-store"] != nil
        noCache = seen["no-cache"] != nil
        isPrivate = seen["private"] != nil
        isPublic = seen["public"] != nil
        mustRevalidate = seen["must-revalidate"] != nil
        proxyRevalidate = seen["proxy-revalidate"] != nil
        immutable = seen["immutable"] != nil
        onlyIfCached = seen["only-if-cached"] != nil
        noTransform = seen["no-transform"] != nil
    }

    /// The directives of one field value: lowercase names with their argument, if any.
    static func directives(_ value: String) -> [(String, String?)] {
        var result: [(String, String?)] = []
        var rest = Substring(value)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            guard !rest.isEmpty else { break }
            let nameEnd = rest.firstIndex { $0 == "=" || $0 == "," } ?? rest.endIndex
            let name = rest[..<nameEnd].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[nameEnd...]
            var argument: String?
            if rest.first == "=" {
                rest = rest.dropFirst().drop { $0 == " " || $0 == "\t" }
                if rest.first == "\"" {
                    // A quoted string: up to the closing quote, backslash escapes kept as written.
                    var text = ""
                    var index = rest.index(after: rest.startIndex)
                    var escaped = false
                    while index < rest.endIndex {
                        let character = rest[index]
                        index = rest.index(after: index)
                        if escaped {
                            text.append(character)
                            escaped = false
                        } else if character == "\\" {
                            escaped = true
                        } else if character == "\"" {
                            break
                        } else {
                            text.append(character)
                        }
                    }
                    argument = text
                    rest = rest[index...]
                    rest = rest[(rest.firstIndex(of: ",") ?? rest.endIndex)...]
                } else {
                    let end = rest.firstIndex(of: ",") ?? rest.endIndex
                    argument = rest[..<end].trimmingCharacters(in: .whitespaces)
                    rest = rest[end...]
                }
            }
            if !name.isEmpty { result.append((name, argument)) }
        }
        return result
    }

    /// Delta-seconds: digits only (`Int.max` when too large); `nil` otherwise.
    static func deltaSeconds(_ argument: String?) -> Int? {
        guard let argument, !argument.isEmpty, argument.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(argument) ?? Int.max
    }
}
