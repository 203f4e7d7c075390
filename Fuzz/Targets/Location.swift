// fuzz: seeded-runs 500000
@testable import CourierCore
import Foundation

/// `Location` and other URI references a server sends, resolved as redirects are. Rules checked
/// beyond "no crash":
/// - an accepted reference is an absolute http or https URL with a host, its scheme and host in
///   lowercase (their canonical form), holding no whitespace, backslash or control character
///   (what parsers read differently);
/// - resolving is stable: the accepted URL, resolved again, is itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let reference = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard case .success(let url) = URLSyntax.resolve(reference, against: base) else { return 0 }
    require(url.scheme == "http" || url.scheme == "https", "resolved to scheme \(url.scheme ?? "none")")
    let host = url.host ?? ""
    require(!host.isEmpty, "resolved without a host")
    require(!host.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }, "a host not in lowercase: \(host)")
    let text = url.absoluteString
    require(!text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || $0 == "\\" }, "an ambiguous URL: \(text)")
    guard case .success(let again) = URLSyntax.resolve(text, against: nil) else {
        fail("an accepted URL is refused when resolved again: \(text)")
    }
    require(again.absoluteString == text, "resolving again changed \(text) into \(again.absoluteString)")
    return 0
}

private let base = URL(string: "https://api.example.com/v1/items?page=2")
