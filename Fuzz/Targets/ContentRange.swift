// fuzz: seeded-runs 300000
@testable import CourierCore
import Foundation

/// `Content-Range` values (a resumed download's `206`). Rules checked beyond "no crash":
/// - an accepted range has 0 ≤ start ≤ end, a total (when known) past its end, and a length of
///   at least one byte that does not overflow;
/// - its canonical form (`bytes start-end/total`) parses to the same range.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let value = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard let range = withinBudget("ContentRange", { ContentRange(value) }) else { return 0 }
    require(range.start >= 0 && range.end >= range.start, "an accepted range runs backwards: \(range)")
    if let total = range.total { require(total > range.end, "a total not past the end: \(range)") }
    let (length, overflow) = (range.end - range.start).addingReportingOverflow(1)
    require(!overflow && length >= 1 && range.length == length, "a length out of range: \(range)")
    let canonical = "bytes \(range.start)-\(range.end)/\(range.total.map { String($0) } ?? "*")"
    require(ContentRange(canonical) == range, "\(canonical) does not parse back to \(range)")
    return 0
}
