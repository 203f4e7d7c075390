import CourierCore

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The date in a cookie's `Expires` attribute, read with the algorithm of
/// [RFC 6265 §5.1.1](https://www.rfc-editor.org/rfc/rfc6265#section-5.1.1): servers write these
/// dates in many forms (`Wed, 21 Oct 2015 07:28:00 GMT`, `Wednesday, 21-Oct-15 07:28:00 GMT`,
/// `Wed Oct 21 07:28:00 2015`), and the RFC reads them all the same way: split at delimiters,
/// then take the first time, day of month, month and year found, in any order.
enum CookieDate {
    /// The instant `value` names, or `nil` when it is not a cookie date (a part missing or out
    /// of range, a year before 1601, an impossible day).
    /// - Parameter value: The attribute's value, at most 1,024 bytes (longer attributes are
    ///   ignored before this is called).
    static func parse(_ value: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var dayOfMonth: Int?
        var month: Int?
        var year: Int?
        for token in tokens(of: Array(value.utf8)) {
            if time == nil, let found = self.time(token) {
                time = found
            } else if dayOfMonth == nil, let found = digits(token, min: 1, max: 2) {
                dayOfMonth = found
            } else if month == nil, let found = self.month(token) {
                month = found
            } else if year == nil, let found = digits(token, min: 2, max: 4) {
                year = found
            }
        }
        guard let time, let dayOfMonth, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard dayOfMonth >= 1, dayOfMonth <= HTTPDate.daysIn(month: month, year: year), year >= 1601,
            time.hour <= 23, time.minute <= 59, time.second <= 59
        else { return nil }
        let days = HTTPDate.daysFromCivil(year: year, month: month, day: dayOfMonth)
        return Date(timeIntervalSince1970: TimeInterval(((days * 24 + time.hour) * 60 + time.minute) * 60 + time.second))
    }

    /// The runs of non-delimiters (RFC 6265's `date-token`s).
    private static func tokens(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var tokens: [ArraySlice<UInt8>] = []
        var start: Int?
        for (index, byte) in bytes.enumerated() {
            if isDelimiter(byte) {
                if let begun = start { tokens.append(bytes[begun..<index]) }
                start = nil
            } else if start == nil {
                start = index
            }
        }
        if let begun = start { tokens.append(bytes[begun...]) }
        return tokens
    }

    /// `delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte)
            || (0x7B...0x7E).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// `min` to `max` digits, then nothing or a non-digit and anything.
    private static func digits(_ token: ArraySlice<UInt8>, min: Int, max: Int) -> Int? {
        var value = 0
        var count = 0
        for byte in token {
            guard isDigit(byte) else { break }
            count += 1
            if count > max { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return count >= min ? value : nil
    }

    /// `hms-time = time-field ":" time-field ":" time-field`, each 1–2 digits, then nothing or
    /// a non-digit and anything.
    private static func time(_ token: ArraySlice<UInt8>) -> (hour: Int, minute: Int, second: Int)? {
        var fields: [Int] = []
        var index = token.startIndex
        while fields.count < 3 {
            var value = 0
            var count = 0
            while index < token.endIndex, isDigit(token[index]) {
                count += 1
                if count > 2 { return nil }
                value = value * 10 + Int(token[index] - 0x30)
                index += 1
            }
            guard count > 0 else { return nil }
            fields.append(value)
            if fields.count < 3 {
                guard index < token.endIndex, token[index] == UInt8(ascii: ":") else { return nil }
                index += 1
            }
        }
        return (fields[0], fields[1], fields[2])
    }

    /// The month its first three letters name, case-insensitively.
    private static func month(_ token: ArraySlice<UInt8>) -> Int? {
        guard token.count >= 3 else { return nil }
        let name = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        return HTTPDate.months.firstIndex(of: name).map { $0 + 1 }
    }
}
