/// A target's rule: stops the run with `message` when `condition` is false. Targets are built
/// optimised (`-O`), where `precondition` drops its message; `fatalError` keeps it, and the
/// message says which rule broke.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("rule broken: \(message())") }
}

/// Stops the run: a rule broken where no condition is left to check.
func fail(_ message: @autoclosure () -> String) -> Never {
    fatalError("rule broken: \(message())")
}
