import CLibFuzzer

/// The CPU time one input may take: 100 ms, what the fuzzing issue allows a parser on this
/// machine (with AddressSanitizer). libFuzzer's own `-timeout` counts whole seconds of wall
/// time and is left to catch hangs.
let inputBudgetNanoseconds: UInt64 = 100_000_000

/// `body`'s result, checked against ``inputBudgetNanoseconds`` of this thread's CPU time (not
/// wall time: a shared machine that stalls the process for a second must not pass for a slow
/// parser). An input over budget is tried twice more and fails only when every try is over (a
/// cold cache or a page fault storm can slow one try; a slow parser is slow every time).
///
/// The clock is read and compared in C (`CLibFuzzer`), outside libFuzzer's coverage: compared
/// here, the times would go into libFuzzer's table of compared values and steer its mutations,
/// and a run with a fixed seed would differ from try to try.
func withinBudget<Result>(_ what: String, _ body: () -> Result) -> Result {
    var first: Result? = nil
    var last: UInt64 = 0
    for _ in 0..<3 {
        let start = courier_fuzz_thread_cpu_ns()
        let value = body()
        if first == nil { first = value }
        if courier_fuzz_cpu_over(start, inputBudgetNanoseconds) == 0, let first { return first }
        last = courier_fuzz_thread_cpu_ns() &- start
    }
    fail("\(what) took over \(inputBudgetNanoseconds / 1_000_000) ms of CPU on this input three times (the last \(last / 1_000) µs)")
}
