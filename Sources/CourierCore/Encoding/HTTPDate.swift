#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// HTTP dates ([RFC 9110 §5.6.7](https://www.rfc-editor.org/rfc/rfc9110#section-5.6.7)), read
/// by hand: `Retry-After` today, and the fields caches and cookies read.
///
/// All three formats a recipient must accept: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`),
/// the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`, its two-digit year taken as the
/// latest such year not more than 50 years ahead) and asctime (`Sun Nov  6 08:49:37 1994`).
/// Day and month names compare case-insensitively; everything else is exact (two-digit days
/// and times, one space between parts, `GMT`), and an impossible date (31 February, hour 24)
/// is no date. Foundation's `DateFormatter` is not used: it is slow to make, lenient in ways
/// that differ by platform, and on Linux some input stops the process.
package enum HTTPDate {
    /// The instant `value` names, or `nil` when it is not an HTTP date.
    /// - Parameters:
    ///   - value: The field value, surrounding whitespace allowed.
    ///   - now: The wall-clock time, for the RFC 850 form's two-digit year.
    package static func parse(_ value: String, now: Date = Date()) -> Date? {
        var bytes = Array(value.utf8)[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes.removeFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        // Long enough for any of the three, short enough that nothing else is read.
        guard bytes.count >= 24, bytes.count <= 40 else { return nil }
        if let comma = bytes.firstIndex(of: UInt8(ascii: ",")) {
            let name = bytes[..<comma]
            if comma - bytes.startIndex == 3 {
                guard weekday(name) != nil else { return nil }
                return imfFixdate(bytes[(comma + 1)...])
            }
            guard fullWeekdays.contains(where: { equalIgnoringCase(name, $0) }) else { return nil }
            return rfc850(bytes[(comma + 1)...], now: now)
        }
        return asctime(bytes)
    }

    /// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form HTTP fields use.
    /// Dates before year 1 or after 9999 are written as those years' limits.
    package static func format(_ date: Date) -> String {
        let limit = 253_402_300_799.0  // 9999-12-31T23:59:59Z
        let seconds = date.timeIntervalSince1970.isFinite ? Swift.min(Swift.max(date.timeIntervalSince1970, -62_135_596_800), limit) : 0
        let total = Int(seconds.rounded(.down))
        let days = total >= 0 ? total / 86_400 : (total - 86_399) / 86_400
        let secondOfDay = total - days * 86_400
        let civil = civilFromDays(days)
        let weekday = weekdays[((days % 7) + 7 + 4) % 7]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = String(repeating: "0", count: Swift.max(0, 4 - String(civil.year).count)) + String(civil.year)
        return "\(weekday.prefix(1).uppercased())\(weekday.dropFirst()), \(two(civil.day)) "
            + "\(months[civil.month - 1].prefix(1).uppercased())\(months[civil.month - 1].dropFirst()) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// Year, month and day of a day counted from 1970-01-01 (Hinnant's `civil_from_days`).
    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `SP 06 SP Nov SP 1994 SP 08:49:37 SP GMT`, after the day name and comma.
    private static func imfFixdate(_ bytes: ArraySlice<UInt8>) -> Date? {
        var reader = Reader(bytes)
        guard reader.skip(" "), let day = reader.digits(2), reader.skip(" "), let month = reader.month(), reader.skip(" "),
            let year = reader.digits(4), reader.skip(" "), let time = reader.time(), reader.skip(" GMT"), reader.isAtEnd
        else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    /// `SP 06-Nov-94 SP 08:49:37 SP GMT`, after the day name and comma.
    private static func rfc850(_ bytes: ArraySlice<UInt8>, now: Date) -> Date? {
        var reader = Reader(bytes)
        guard reader.skip(" "), let day = reader.digits(2), reader.skip("-"), let month = reader.month(), reader.skip("-"),
            let shortYear = reader.digits(2), reader.skip(" "), let time = reader.time(), reader.skip(" GMT"), reader.isAtEnd
        else { return nil }
        // RFC 9110: a year that appears to be more than 50 years ahead is the latest past year
        // with the same last two digits.
        let thisYear = civilYear(of: now)
        var year = thisYear - thisYear % 100 + shortYear
        if year > thisYear + 50 { year -= 100 }
        return date(year: year, month: month, day: day, time: time)
    }

    /// `Sun SP Nov SP  6 SP 08:49:37 SP 1994` (the day padded with a space).
    private static func asctime(_ bytes: ArraySlice<UInt8>) -> Date? {
        var reader = Reader(bytes)
        guard let name = reader.take(3), weekday(name) != nil, reader.skip(" "), let month = reader.month(), reader.skip(" ")
        else { return nil }
        let day: Int
        if reader.skip(" ") {
            guard let digit = reader.digits(1) else { return nil }
            day = digit
        } else {
            guard let digits = reader.digits(2) else { return nil }
            day = digits
        }
        guard reader.skip(" "), let time = reader.time(), reader.skip(" "), let year = reader.digits(4), reader.isAtEnd else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    /// The instant, when every part is in range (a leap second reads as the second before).
    private static func date(year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)) -> Date? {
        guard day >= 1, day <= daysIn(month: month, year: year), time.hour <= 23, time.minute <= 59, time.second <= 60 else {
            return nil
        }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = ((days * 24 + time.hour) * 60 + time.minute) * 60 + min(time.second, 59)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to the date in the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`).
    package static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The Gregorian year `date` falls in (UTC).
    private static func civilYear(of date: Date) -> Int {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        return civilFromDays(days).year
    }

    static let weekdays = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    private static let fullWeekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]
    package static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func weekday(_ name: ArraySlice<UInt8>) -> Int? {
        weekdays.firstIndex { equalIgnoringCase(name, $0) }
    }

    /// Whether `bytes` spell `lowercase` in ASCII, in any case.
    fileprivate static func equalIgnoringCase(_ bytes: ArraySlice<UInt8>, _ lowercase: String) -> Bool {
        bytes.count == lowercase.utf8.count
            && zip(bytes, lowercase.utf8).allSatisfy { byte, expected in
                (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == expected
            }
    }

    /// Reads the parts of a date from left to right.
    private struct Reader {
        var bytes: ArraySlice<UInt8>

        init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

        var isAtEnd: Bool { bytes.isEmpty }

        mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
            guard bytes.count >= count else { return nil }
            defer { bytes = bytes.dropFirst(count) }
            return bytes.prefix(count)
        }

        /// Moves past `literal` when the bytes start with it.
        mutating func skip(_ literal: String) -> Bool {
            guard bytes.starts(with: literal.utf8) else { return false }
            bytes = bytes.dropFirst(literal.utf8.count)
            return true
        }

        /// Exactly `count` ASCII digits.
        mutating func digits(_ count: Int) -> Int? {
            guard let digits = take(count), digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        }

        /// A three-letter month name, 1 to 12.
        mutating func month() -> Int? {
            guard let name = take(3), let index = HTTPDate.months.firstIndex(where: { HTTPDate.equalIgnoringCase(name, $0) }) else {
                return nil
            }
            return index + 1
        }

        /// `08:49:37`.
        mutating func time() -> (hour: Int, minute: Int, second: Int)? {
            guard let hour = digits(2), skip(":"), let minute = digits(2), skip(":"), let second = digits(2) else { return nil }
            return (hour, minute, second)
        }
    }
}
