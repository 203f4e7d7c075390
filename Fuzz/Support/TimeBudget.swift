import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The time one input may take: 100 ms of CPU, what the fuzzing issue allows a parser on this
/// machine (with AddressSanitizer). libFuzzer's own `-timeout` counts whole seconds of wall
/// time and is left to catch hangs.
let inputBudget = Duration.milliseconds(100)

/// The CPU time this thread has used. CPU time, not wall time: a shared machine that stalls the
/// process for a second (a build on both cores) must not pass for a slow parser.
private func threadCPUTime() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
}

/// `body`'s result, checked against ``inputBudget``. An input over budget is tried twice more
/// and fails only when every try is over (a cold cache or a page fault storm can slow one try;
/// a slow parser is slow every time).
func withinBudget<Result>(_ what: String, _ body: () -> Result) -> Result {
    var fastest = Duration.seconds(Int64.max)
    var result: Result? = nil
    for _ in 0..<3 {
        let start = threadCPUTime()
        let value = body()
        fastest = min(fastest, threadCPUTime() - start)
        if result == nil { result = value }
        if fastest <= inputBudget { break }
    }
    require(fastest <= inputBudget, "\(what) took \(fastest) of CPU on this input (budget \(inputBudget))")
    // `result` was set by the first try.
    guard let result else { fail("no try ran") }
    return result
}
