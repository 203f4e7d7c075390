/// Percent-encoding of URL components ([RFC 3986 §2.1](https://www.rfc-editor.org/rfc/rfc3986#section-2.1)).
///
/// Strings are encoded as UTF-8; every byte outside the component's allowed set becomes `%XX`
/// with upper-case hex digits. Strings that need no encoding are returned without copying.
package enum PercentEncoding {
    /// A set of ASCII bytes left as they are.
    struct AllowedSet: Sendable {
        private var low: UInt64 = 0
        private var high: UInt64 = 0

        init(_ characters: String) {
            for byte in characters.utf8 { insert(byte) }
        }

        private mutating func insert(_ byte: UInt8) {
            if byte < 64 { low |= 1 << UInt64(byte) } else if byte < 128 { high |= 1 << UInt64(byte - 64) }
        }

        @inline(__always)
        func contains(_ byte: UInt8) -> Bool {
            if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
            if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
            return false
        }

        /// `ALPHA / DIGIT / "-" / "." / "_" / "~"`
        static let unreserved = AllowedSet(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

        /// A path segment: unreserved plus the sub-delimiters and `:` `@` that servers do not
        /// treat specially. `;` is encoded because some servers read it as a parameter separator.
        static let pathSegment = AllowedSet(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,=:@")

        /// A query name or value: unreserved plus `:`, `@`, `/` and `?`, which have no meaning
        /// inside a query. `+`, `&`, `=`, `;` and `#` are encoded so that they arrive literally.
        static let queryComponent = AllowedSet(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:@/?!$'()*,")

        /// A pre-encoded query name: the query component set plus `+` (a form-encoded space).
        static let encodedQueryName = AllowedSet(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:@/?!$'()*,+")

        /// A pre-encoded query value: as a name, plus `=`, which servers read as part of the value.
        static let encodedQueryValue = AllowedSet(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:@/?!$'()*,+=")
    }

    /// Whether `string` is already percent-encoded: every byte is in `allowed` or starts a valid
    /// `%XX` escape.
    static func isValidEncoded(_ string: String, allowed: AllowedSet) -> Bool {
        var bytes = string.utf8.makeIterator()
        while let byte = bytes.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = bytes.next(), hexValue(high) != nil, let low = bytes.next(), hexValue(low) != nil else {
                    return false
                }
            } else if !allowed.contains(byte) {
                return false
            }
        }
        return true
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes `string`, leaving bytes in `allowed` as they are.
    static func encode(_ string: String, allowed: AllowedSet) -> String {
        var extra = 0
        for byte in string.utf8 where !allowed.contains(byte) { extra += 2 }
        if extra == 0 { return string }
        let count = string.utf8.count + extra
        return String(unsafeUninitializedCapacity: count) { buffer in
            var index = 0
            for byte in string.utf8 {
                if allowed.contains(byte) {
                    buffer[index] = byte
                    index += 1
                } else {
                    buffer[index] = UInt8(ascii: "%")
                    buffer[index + 1] = hexDigits[Int(byte >> 4)]
                    buffer[index + 2] = hexDigits[Int(byte & 0x0F)]
                    index += 3
                }
            }
            return index
        }
    }

    /// Decodes `%XX` escapes; invalid escapes are kept as they are. Used only for display.
    package static func decode(_ string: Substring) -> String {
        guard string.contains("%") else { return String(string) }
        return String(decoding: decodedBytes(string), as: UTF8.self)
    }

    /// The bytes `%XX` escapes stand for, with the other bytes as they are (invalid escapes
    /// kept as written).
    static func decodedBytes(_ string: Substring) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(string.utf8.count)
        var iterator = Array(string.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let high = hexValue(iterator[iterator.startIndex]),
                let low = hexValue(iterator[iterator.startIndex + 1])
            {
                bytes.append(high << 4 | low)
                iterator.removeFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// Writes bytes into a buffer made large enough up front (three bytes per input byte covers any
/// percent-encoding), for strings assembled from many parts without a growing `String`.
/// Never writes past the buffer; a write that would is dropped and remembered in `overflowed`.
struct ByteWriter {
    let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0
    private(set) var overflowed = false

    init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    /// The bytes written so far.
    var written: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(rebasing: buffer[..<count]) }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        guard count < buffer.count else { overflowed = true; return }
        buffer[count] = byte
        count &+= 1
    }

    mutating func append(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) {
        guard bytes.count <= buffer.count &- count else { overflowed = true; return }
        for byte in bytes {
            buffer[count] = byte
            count &+= 1
        }
    }

    /// Appends `string`, percent-encoding every byte outside `allowed`; with `encoding` false,
    /// the bytes as they are.
    mutating func append(_ string: String, allowed: PercentEncoding.AllowedSet, encoding: Bool = true) {
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes { append(byte, allowed: allowed, encoding: encoding) }
        }
        if done == nil {
            for byte in string.utf8 { append(byte, allowed: allowed, encoding: encoding) }
        }
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8, allowed: PercentEncoding.AllowedSet, encoding: Bool) {
        if !encoding || allowed.contains(byte) {
            append(byte)
            return
        }
        guard count &+ 2 < buffer.count else { overflowed = true; return }
        buffer[count] = UInt8(ascii: "%")
        buffer[count &+ 1] = Self.hexDigit(byte >> 4)
        buffer[count &+ 2] = Self.hexDigit(byte & 0x0F)
        count &+= 3
    }

    /// The upper-case hexadecimal digit for a value below 16.
    @inline(__always)
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") &+ value : UInt8(ascii: "A") &+ value &- 10
    }
}
