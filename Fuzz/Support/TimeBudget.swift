import Foundation

/// The time one input may take: 100 ms, what the fuzzing issue allows a parser on this machine
/// (with AddressSanitizer, unoptimised). libFuzzer's own `-timeout` counts whole seconds.
let inputBudget = Duration.milliseconds(100)

/// `body`'s result, checked against ``inputBudget``. An input over budget is tried twice more
/// and fails only when every try is over (a shared machine can stall a process for a moment;
/// a slow parser is slow every time).
func withinBudget<Result>(_ what: String, _ body: () -> Result) -> Result {
    let clock = ContinuousClock()
    var fastest = Duration.seconds(Int64.max)
    var result: Result? = nil
    for _ in 0..<3 {
        let start = clock.now
        let value = body()
        fastest = min(fastest, clock.now - start)
        if result == nil { result = value }
        if fastest <= inputBudget { break }
    }
    require(fastest <= inputBudget, "\(what) took \(fastest) on this input (budget \(inputBudget))")
    // `result` was set by the first try.
    guard let result else { fail("no try ran") }
    return result
}
