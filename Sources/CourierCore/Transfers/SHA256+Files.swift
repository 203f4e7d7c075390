#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

// Hashing files, for a download's checksum: beside the downloads, above the hasher and the errors.

extension SHA256 {
    /// The digest of a file's contents, read in 1 MiB pieces.
    /// - Parameter file: The file.
    /// - Returns: 32 bytes.
    /// - Throws: ``CourierError`` with cause ``CourierError/Cause/fileFailure(_:)`` when the file
    ///   cannot be read.
    public static func hash(contentsOf file: URL) throws(CourierError) -> [UInt8] {
        let handle: OpenFile
        do {
            guard file.isFileURL else { throw CocoaError(.fileReadUnsupportedScheme) }
            handle = try OpenFile.reading(file.path)
        } catch {
            throw CourierError(.fileFailure("cannot read \(file.lastPathComponent.debugDescription) to hash it"), underlyingError: error)
        }
        defer { handle.close() }
        var hasher = SHA256()
        while true {
            let block: Data
            do {
                block = try handle.read(upTo: 1 << 20)
            } catch {
                throw CourierError(.fileFailure("cannot read \(file.lastPathComponent.debugDescription) to hash it"), underlyingError: error)
            }
            guard !block.isEmpty else { return hasher.digest }
            hasher.update(block)
        }
    }
}

/// A ``DownloadOptions/verify`` check that the file's SHA-256 is `expected` (hexadecimal, any
/// case, spaces ignored); a mismatch fails the download with
/// ``CourierError/Cause/fileFailure(_:)`` and the file is deleted.
///
/// ```swift
/// DownloadOptions(verify: verifySHA256("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"))
/// ```
/// - Parameter expected: The expected digest.
/// - Returns: The check.
public func verifySHA256(_ expected: String) -> @Sendable (URL) async throws -> Void {
    let wanted = expected.lowercased().filter { !$0.isWhitespace }
    return { file in
        let actual = SHA256.hex(try SHA256.hash(contentsOf: file))
        guard actual == wanted else {
            throw CourierError(.fileFailure("the SHA-256 of \(file.lastPathComponent.debugDescription) is \(actual), not the \(wanted) expected"))
        }
    }
}
