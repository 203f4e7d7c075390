#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What went wrong with a file, in words for an error message: the system's text for an
/// `errno` (`No such file or directory`), the same with full Foundation and with
/// FoundationEssentials (which has no localized descriptions).
package enum SystemErrorText {
    /// The C library's text for `code`.
    package static func text(for code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// The text of a file operation's error: the system's words for the POSIX error under it,
    /// or else the error's own description.
    package static func text(for error: any Error) -> String {
        if let posix = error as? POSIXError { return text(for: posix.code.rawValue) }
        if let cocoa = error as? CocoaError, let posix = cocoa.userInfo["NSUnderlyingError"] as? POSIXError {
            return text(for: posix.code.rawValue)
        }
        #if canImport(FoundationEssentials)
            return String(describing: error)
        #else
            return error.localizedDescription
        #endif
    }
}
