#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HTTP dates (RFC 9110 §5.6.7): parsing of all three formats and formatting as IMF-fixdate.
///
/// Parsing is strict about structure — single spaces, two-digit time fields, a comma after the
/// day name, `GMT` as the zone — because a date that does not parse is treated as invalid (an
/// invalid `Expires` means "already expired", RFC 9111 §5.3). It is lenient about letter case
/// (`THU`, `AUG`, `gmt`), which RFC 9110 leaves to recipients and real servers get wrong.
///
/// ```swift
/// HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")   // IMF-fixdate
/// HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT")  // obsolete RFC 850
/// HTTPDate.parse("Sun Nov  6 08:49:37 1994")        // obsolete asctime()
/// HTTPDate.format(date)                             // "Sun, 06 Nov 1994 08:49:37 GMT"
/// ```
public enum HTTPDate {
    /// Parses an HTTP date in any of the three formats, or returns `nil`.
    ///
    /// - Parameters:
    ///   - text: the field value.
    ///   - now: the reference for two-digit RFC 850 years: RFC 9110 §5.6.7 reads a year more than
    ///     50 years in the future as the most recent past year with those digits. When `nil`,
    ///     years 00–69 are read as 20xx and 70–99 as 19xx.
    public static func parse(_ text: String, now: Date? = nil) -> Date? {
        var text = text
        return text.withUTF8 { bytes in
            let trimmed = trimmed(bytes)
            return parseIMFFixdate(trimmed) ?? parseRFC850(trimmed, now: now) ?? parseAsctime(trimmed)
        }
    }

    /// Formats a date as IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`. Dates before the
    /// year 0000 or after 9999 (the four digits a date has; a time read from a damaged index)
    /// are written as those years' ends.
    public static func format(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        let seconds = Int64(
            interval.isNaN ? 0 : min(max(interval, Self.earliestFormatted), Self.latestFormatted).rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = CivilCalendar.civil(fromDays: days)
        let weekday = Int((days % 7 + 11) % 7)  // 1970-01-01 was a Thursday
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var yearText = String(year)
        while yearText.count < 4 { yearText = "0" + yearText }
        return "\(shortDays[weekday]), \(two(day)) \(months[month - 1]) \(yearText) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    /// `Sat, 01 Jan 0000 00:00:00 GMT` and `Fri, 31 Dec 9999 23:59:59 GMT`, in seconds since 1970:
    /// every date ``parse(_:now:)`` reads formats and parses back to itself.
    static let earliestFormatted: TimeInterval = -62_167_219_200
    static let latestFormatted: TimeInterval = 253_402_300_799

    static let shortDays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}

/// Conversions between days since 1970-01-01 and proleptic Gregorian dates.
enum CivilCalendar {
    /// Days since the epoch for a civil date (H. Hinnant's algorithm).
    static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
