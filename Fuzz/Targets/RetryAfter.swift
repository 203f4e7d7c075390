// fuzz: seeded-runs 500000
@testable import CourierCore
@testable import CourierResilience
import Foundation

/// `Retry-After` values (delay-seconds or an HTTP date). Rules checked beyond "no crash":
/// - a delay is never negative;
/// - a value of ASCII digits alone is exactly that many seconds (or nothing, when it does not fit);
/// - a date is read the same whatever the wall clock says, less the time that passed.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let value = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let delay = withinBudget("RetryAfter") { RetryAfter.delay(value, now: now) }
    guard let delay else { return 0 }
    require(delay >= .zero, "a negative delay for \(value.debugDescription)")
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    if trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
        require(Int64(trimmed).map { Duration.seconds($0) } == delay, "digits read as \(delay): \(value.debugDescription)")
    } else if let later = RetryAfter.delay(value, now: now.addingTimeInterval(60)) {
        // A date: a minute later, the wait is a minute shorter (or over).
        let expected = max(.zero, delay - .seconds(60))
        require(abs((later - expected).seconds) < 0.001, "a date read differently a minute later: \(value.debugDescription)")
    } else {
        fail("a date accepted once and refused a minute later: \(value.debugDescription)")
    }
    return 0
}

private let now = Date(timeIntervalSince1970: 1_764_000_000)
