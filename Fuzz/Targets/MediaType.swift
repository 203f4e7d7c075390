// fuzz: seeded-runs 80000
@testable import CourierCore
import Foundation

/// `Content-Type` values as a response's decoder reads them. Rules checked beyond "no crash":
/// - the essence is `type/subtype` in ASCII lowercase: no parameter, no surrounding whitespace;
/// - the essence is its own essence (stable);
/// - a well-formed type (`type/subtype`, each a token, RFC 9110 §5.6.2) matches itself and is
///   matched by `*/*` and `type/*`; anything else matches nothing and is matched by nothing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let value = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let type = MediaType(rawValue: value)
    let essence = withinBudget("MediaType.essence") { type.essence }
    require(!essence.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }, "an essence with a capital: \(essence)")
    // On bytes, as the parser reads them: a Greek question mark (U+037E) equals ";" as a
    // Character but is not the separator, and a space with a combining mark is not " ".
    require(!essence.utf8.contains(UInt8(ascii: ";")), "an essence with a parameter: \(essence)")
    let edges = [essence.utf8.first, essence.utf8.last]
    require(!edges.contains(0x20) && !edges.contains(0x09), "an essence with whitespace around it")
    require(MediaType(rawValue: essence).essence == essence, "an essence that changes when read again: \(essence)")
    let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
    let matchesItself = withinBudget("MediaType.matches") { type.matches(type) }
    if parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.unicodeScalars.allSatisfy(tokenCharacters.contains) }) {
        require(matchesItself, "\(value.debugDescription) does not match itself")
        require(MediaType.any.matches(type), "*/* does not match \(value.debugDescription)")
        require(MediaType(rawValue: "\(parts[0])/*").matches(type), "\(parts[0])/* does not match \(value.debugDescription)")
    } else {
        require(!matchesItself && !MediaType.any.matches(type) && !type.matches(.any), "\(value.debugDescription) is not well formed but matches")
    }
    return 0
}

/// `tchar` (RFC 9110 §5.6.2).
private let tokenCharacters = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".unicodeScalars)
