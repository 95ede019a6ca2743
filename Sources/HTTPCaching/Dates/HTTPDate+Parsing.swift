#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The byte-level readers behind ``HTTPDate/parse(_:now:)``.
extension HTTPDate {
    typealias Bytes = UnsafeBufferPointer<UInt8>.SubSequence

    static func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> Bytes {
        var slice = bytes[...]
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return slice
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    static func parseIMFFixdate(_ s: Bytes) -> Date? {
        guard s.count == 29 else { return nil }
        var reader = DateReader(s)
        guard reader.dayName(HTTPDate.shortDays) != nil, reader.expect(","), reader.expect(" "),
            let day = reader.digits(2), reader.expect(" "),
            let month = reader.month(), reader.expect(" "),
            let year = reader.digits(4), reader.expect(" "),
            let time = reader.time(), reader.expect(" "), reader.gmt(), reader.atEnd
        else { return nil }
        return makeDate(year: year, month: month, day: day, time: time)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`
    static func parseRFC850(_ s: Bytes, now: Date?) -> Date? {
        var reader = DateReader(s)
        guard reader.dayName(HTTPDate.longDays) != nil, reader.expect(","), reader.expect(" "),
            let day = reader.digits(2), reader.expect("-"),
            let month = reader.month(), reader.expect("-"),
            let shortYear = reader.digits(2), reader.expect(" "),
            let time = reader.time(), reader.expect(" "), reader.gmt(), reader.atEnd
        else { return nil }
        return makeDate(year: fullYear(shortYear, now: now), month: month, day: day, time: time)
    }

    /// `Sun Nov  6 08:49:37 1994`
    static func parseAsctime(_ s: Bytes) -> Date? {
        var reader = DateReader(s)
        guard reader.dayName(HTTPDate.shortDays) != nil, reader.expect(" "),
            let month = reader.month(), reader.expect(" ")
        else { return nil }
        let day: Int
        if reader.expect(" ") {
            guard let digit = reader.digits(1) else { return nil }
            day = digit
        } else {
            guard let digits = reader.digits(2) else { return nil }
            day = digits
        }
        guard reader.expect(" "), let time = reader.time(), reader.expect(" "),
            let year = reader.digits(4), reader.atEnd
        else { return nil }
        return makeDate(year: year, month: month, day: day, time: time)
    }

    /// RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in the past century.
    static func fullYear(_ twoDigits: Int, now: Date?) -> Int {
        guard let now else { return twoDigits < 70 ? 2000 + twoDigits : 1900 + twoDigits }
        let days = Int64((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let currentYear = CivilCalendar.civil(fromDays: days).year
        var year = currentYear - currentYear % 100 + twoDigits
        if year > currentYear + 50 { year -= 100 }
        return year
    }

    static func makeDate(year: Int, month: Int, day: Int, time: (Int, Int, Int)) -> Date? {
        guard day >= 1, day <= CivilCalendar.daysInMonth(month, year: year),
            time.0 < 24, time.1 < 60, time.2 <= 60
        else { return nil }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        // A leap second (:60) is read as the last second of the minute.
        let seconds = days * 86_400 + Int64(time.0 * 3600 + time.1 * 60 + min(time.2, 59))
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}

/// A cursor over the bytes of a date.
struct DateReader {
    private var rest: HTTPDate.Bytes

    init(_ bytes: HTTPDate.Bytes) { rest = bytes }

    var atEnd: Bool { rest.isEmpty }

    mutating func expect(_ character: Character) -> Bool {
        guard let first = rest.first, first == character.asciiValue else { return false }
        rest = rest.dropFirst()
        return true
    }

    mutating func digits(_ count: Int) -> Int? {
        guard rest.count >= count else { return nil }
        var value = 0
        for byte in rest.prefix(count) {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        rest = rest.dropFirst(count)
        return value
    }

    /// Matches one of `names`, ignoring case; returns its index.
    mutating func dayName(_ names: [String]) -> Int? {
        for (index, name) in names.enumerated() where matchesIgnoringCase(name) {
            rest = rest.dropFirst(name.utf8.count)
            return index
        }
        return nil
    }

    /// A three-letter month name, ignoring case; returns 1…12.
    mutating func month() -> Int? {
        dayName(HTTPDate.months).map { $0 + 1 }
    }

    mutating func gmt() -> Bool {
        guard matchesIgnoringCase("GMT") else { return false }
        rest = rest.dropFirst(3)
        return true
    }

    /// `HH:MM:SS`, two digits each.
    mutating func time() -> (Int, Int, Int)? {
        guard let hour = digits(2), expect(":"), let minute = digits(2), expect(":"),
            let second = digits(2)
        else { return nil }
        return (hour, minute, second)
    }

    private func matchesIgnoringCase(_ word: String) -> Bool {
        let utf8 = word.utf8
        guard rest.count >= utf8.count else { return false }
        for (byte, expected) in zip(rest, utf8) where byte | 0x20 != expected | 0x20 {
            return false
        }
        // A longer alphabetic word ("Mon" inside "Monday") is not a match.
        if rest.count > utf8.count {
            let next = rest[rest.index(rest.startIndex, offsetBy: utf8.count)]
            if (next | 0x20) >= 0x61 && (next | 0x20) <= 0x7A { return false }
        }
        return true
    }
}
