// fuzz: seeded-runs 100000
@testable import CourierCaching
@testable import CourierCore
import Foundation

/// `Cache-Control` fields (one per line), and the age of a response whose `Age`, `Date` and
/// `Expires` come from the first three lines. Rules checked beyond "no crash":
/// - every delta-seconds read is zero or more;
/// - a directive counts as its first occurrence: fields repeated after themselves, in either
///   order, read the same;
/// - a response's current age is finite, zero or more, and grows by exactly the time that passes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    withinBudget("CacheControl") {
        let control = CacheControl(fields)
        for value in [control.maxAge, control.sharedMaxAge, control.maxStale, control.minFresh, control.staleWhileRevalidate, control.staleIfError] {
            require((value ?? 0) >= 0, "a negative age from \(fields)")
        }
        require(CacheControl(fields + fields.reversed()) == control, "a repeated directive changed what the first said: \(fields)")
        var headers = HTTPHeaders()
        for (name, value) in zip([HeaderName.age, .date, .expires], fields) where HTTPSyntax.headerValueDefect(value) == nil {
            headers.add(name, value)
        }
        for field in fields.dropFirst(3) where HTTPSyntax.headerValueDefect(field) == nil { headers.add(.cacheControl, field) }
        let entry = CachedResponse(url: "https://a.test/", status: 200, headers: headers, body: Data(), varied: [:], requestTime: now, responseTime: now)
        let age = CacheDecision.currentAge(entry, now: now)
        let later = CacheDecision.currentAge(entry, now: now.addingTimeInterval(100))
        require(age.isFinite && age >= 0, "an age of \(age)")
        require(abs(later - age - 100) < 0.001 || age > 1e11, "the age grew by \(later - age) in 100 s")
    }
    return 0
}

private let now = Date(timeIntervalSince1970: 1_800_000_000)
