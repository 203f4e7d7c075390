/// An error type of a library the core does not import, mapped and redacted by the module that
/// does.
///
/// The core builds on FoundationEssentials where the toolchain has it, which has no `URLError`
/// and no `NSError`; CourierURLSession (which imports full Foundation for URLSession) conforms
/// both, so ``CourierError/wrapping(_:request:)``, the redaction of an underlying error and
/// ``CourierError``'s mirror treat them the same wherever that module is linked (always with
/// `import Courier`), on every platform.
package protocol PlatformError: Error {
    /// The cause the error stands for, or `nil` for none more precise than a failure of its
    /// type (``TransportFailure/Kind/other``).
    var courierCause: CourierError.Cause? { get }

    /// What follows the error's type name in a summary: its domain and code (`(code: -1001)`),
    /// enough to diagnose and nothing that can hold a secret.
    var safeDetail: String { get }

    /// The same error with any URL it carries redacted as `redaction` redacts a request's, and
    /// every other entry that could repeat it dropped; `nil` when it carries none.
    func redacting(with redaction: Redaction) -> (any Error)?
}
