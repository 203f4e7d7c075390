// fuzz: seeded-runs 250000
@testable import CourierCore
import Foundation

/// `Link` header values (pagination) from arbitrary text. Rules checked beyond "no crash":
/// - parsing never fails and yields no more links than the field has commas, plus one;
/// - a link's URL, when it resolves, is an absolute http or https URL with a host;
/// - relations hold no ASCII capital (they compare case-insensitively in ASCII).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let field = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let links = WebLink.parse(field)
    require(links.count <= field.utf8.filter { $0 == UInt8(ascii: ",") }.count + 1, "more links than fields")
    let base = URL(string: "https://api.example.com/v1/items?page=2")
    for link in links {
        // Relation types compare case-insensitively in ASCII (RFC 8288 §2.1.1): no ASCII capital is left.
        for relation in link.relations {
            require(!relation.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }, "a relation not lowercased")
        }
        if let url = link.url(relativeTo: base) {
            require(url.scheme == "http" || url.scheme == "https", "a link resolved to \(url.scheme ?? "no scheme")")
            require(!(url.host ?? "").isEmpty, "a link resolved without a host")
        }
    }
    return 0
}
