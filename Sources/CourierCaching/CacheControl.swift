import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The directives of `Cache-Control` fields, of a request or a response
/// ([RFC 9111 §5.2](https://www.rfc-editor.org/rfc/rfc9111#section-5.2)), as a cache reads them.
///
/// Directive names compare case-insensitively; values may be tokens or quoted strings. A
/// directive given more than once counts as its first occurrence (RFC 9111 §4.2.1 allows the
/// first or "stale"). A delta-seconds that is not a number (`1.5`, `60s`, `'60'`), or a directive
/// written with blanks before its `=` (outside the grammar), reads as `0`: such a response is
/// stale (RFC 9111 §4.2.1), so a malformed field never makes a response fresher than it is.
/// Numbers too large for an `Int` read as `Int.max`.
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
    /// `no-cache` with no field names: reuse only after validating with the origin.
    public var noCache = false
    /// `no-cache="…"` (RFC 9111 §5.2.2.4), lowercase: the fields a stored response never sends
    /// without validating; the rest of it may be reused. A request's qualified `no-cache`
    /// (outside the grammar) reads as the plain one.
    public var noCacheFields: [String] = []
    /// `private` with no field names: only a private cache may store the response.
    public var isPrivate = false
    /// `private="…"` (RFC 9111 §5.2.2.7), lowercase: the fields a shared cache does not store;
    /// it may store the rest.
    public var privateFields: [String] = []
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
            for (name, argument) in Self.directives(value) where seen[name] == nil {
                seen[name] = .some(argument)
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
        func fields(_ name: String) -> [String]? {
            guard case .some(.some(let list)) = seen[name] else { return nil }
            let names = HTTPSyntax.parts(of: list, separatedBy: UInt8(ascii: ",")).map(HTTPSyntax.asciiLowercased).filter { !$0.isEmpty }
            return names.isEmpty ? nil : names
        }
        noCacheFields = fields("no-cache") ?? []
        noCache = seen["no-cache"] != nil && noCacheFields.isEmpty
        privateFields = fields("private") ?? []
        isPrivate = seen["private"] != nil && privateFields.isEmpty
        isPublic = seen["public"] != nil
        mustRevalidate = seen["must-revalidate"] != nil
        proxyRevalidate = seen["proxy-revalidate"] != nil
        immutable = seen["immutable"] != nil
        onlyIfCached = seen["only-if-cached"] != nil
        noTransform = seen["no-transform"] != nil
    }

    /// The directives of one field value: lowercase names with their argument, if any. Read on
    /// UTF-8 bytes: a "," or "=" followed by a combining mark is one Character.
    static func directives(_ value: String) -> [(String, String?)] {
        let bytes = Array(value.utf8)
        var result: [(String, String?)] = []
        var index = 0
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        func text(_ slice: ArraySlice<UInt8>) -> String {
            var slice = slice
            while let first = slice.first, isBlank(first) { slice.removeFirst() }
            while let last = slice.last, isBlank(last) { slice.removeLast() }
            return String(decoding: slice, as: UTF8.self)
        }
        while index < bytes.count {
            while index < bytes.count, isBlank(bytes[index]) || bytes[index] == UInt8(ascii: ",") { index += 1 }
            guard index < bytes.count else { break }
            let nameStart = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: ",") { index += 1 }
            let name = text(bytes[nameStart..<index]).lowercased()
            // `max-age =60`: a blank before "=" is outside the grammar; the value is invalid.
            let blankBeforeEquals = index > nameStart && index < bytes.count && isBlank(bytes[index - 1])
            var argument: String?
            if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                defer { if blankBeforeEquals { argument = "" } }
                index += 1
                while index < bytes.count, isBlank(bytes[index]) { index += 1 }
                if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                    // A quoted string: up to the closing quote, a backslash taking the next byte.
                    var quoted: [UInt8] = []
                    index += 1
                    while index < bytes.count {
                        let byte = bytes[index]
                        index += 1
                        if byte == UInt8(ascii: "\\"), index < bytes.count {
                            quoted.append(bytes[index])
                            index += 1
                        } else if byte == UInt8(ascii: "\"") {
                            break
                        } else {
                            quoted.append(byte)
                        }
                    }
                    argument = String(decoding: quoted, as: UTF8.self)
                    while index < bytes.count, bytes[index] != UInt8(ascii: ",") { index += 1 }
                } else {
                    let start = index
                    while index < bytes.count, bytes[index] != UInt8(ascii: ",") { index += 1 }
                    argument = text(bytes[start..<index])
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
