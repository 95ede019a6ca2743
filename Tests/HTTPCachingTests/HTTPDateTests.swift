import Foundation
import HTTPCaching
import Testing

@Suite("HTTP dates (RFC 9110 §5.6.7)")
struct HTTPDateTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let text: String
        let expected: TimeInterval?
        let rule: String
        var testDescription: String { "\"\(text)\" (\(rule))" }
    }

    // 1994-11-06T08:49:37Z and 2050-08-18T02:01:18Z
    static let nov1994: TimeInterval = 784_111_777
    static let aug2050: TimeInterval = 2_544_400_878

    static let rows: [Row] = [
        .init(text: "Sun, 06 Nov 1994 08:49:37 GMT", expected: nov1994, rule: "IMF-fixdate"),
        .init(text: "Sunday, 06-Nov-94 08:49:37 GMT", expected: nov1994, rule: "obsolete RFC 850"),
        .init(text: "Sun Nov  6 08:49:37 1994", expected: nov1994, rule: "obsolete asctime"),
        .init(text: "Thu Aug 18 02:01:18 2050", expected: aug2050, rule: "asctime, two-digit day"),
        .init(text: "Thursday, 18-Aug-50 02:01:18 GMT", expected: aug2050, rule: "RFC 850, year 50 is 2050 (now 2025)"),
        .init(text: "THU, 18 Aug 2050 02:01:18 GMT", expected: aug2050, rule: "day name case"),
        .init(text: "Thu, 18 AUG 2050 02:01:18 GMT", expected: aug2050, rule: "month case"),
        .init(text: "Thu, 18 Aug 2050 02:01:18 gMT", expected: aug2050, rule: "zone case"),
        .init(text: "  Thu, 18 Aug 2050 02:01:18 GMT ", expected: aug2050, rule: "surrounding whitespace"),
        .init(text: "Tue, 19 Jan 2038 03:14:08 GMT", expected: 2_147_483_648, rule: "past 32 bits"),
        .init(text: "Sun, 21 Nov 2286 04:46:39 GMT", expected: 10_000_039_599, rule: "far future"),
        .init(text: "Thu, 01 Jan 1970 00:00:00 GMT", expected: 0, rule: "epoch"),
        .init(text: "Wed, 31 Dec 1969 23:59:59 GMT", expected: -1, rule: "before the epoch"),
        .init(text: "Tue, 29 Feb 2000 12:00:00 GMT", expected: 951_825_600, rule: "leap day"),
        .init(text: "Thu, 18 Aug 2050 02:01:18 UTC", expected: nil, rule: "UTC is not GMT"),
        .init(text: "Thu, 18 Aug 2050 02:01:18 AEST", expected: nil, rule: "other zones"),
        .init(text: "Thu, 18 Aug 50 02:01:18 GMT", expected: nil, rule: "two-digit year in IMF-fixdate"),
        .init(text: "Thu 18 Aug 2050 02:01:18 GMT", expected: nil, rule: "missing comma"),
        .init(text: "Thu, 18  Aug  2050 02:01:18 GMT", expected: nil, rule: "multiple spaces"),
        .init(text: "Thu, 18-Aug-2050 02:01:18 GMT", expected: nil, rule: "dashes in IMF-fixdate"),
        .init(text: "Thu, 18 Aug 2050 02.01.18 GMT", expected: nil, rule: "periods in time"),
        .init(text: "Thu, 18 Aug 2050 2:01:18 GMT", expected: nil, rule: "one-digit hour"),
        .init(text: "Thu, 8 Aug 2050 02:01:18 GMT", expected: nil, rule: "one-digit day"),
        .init(text: "Thu, 31 Feb 2050 02:01:18 GMT", expected: nil, rule: "no such day"),
        .init(text: "Thu, 18 Aug 2050 24:01:18 GMT", expected: nil, rule: "hour 24"),
        .init(text: "Thu, 18 Foo 2050 02:01:18 GMT", expected: nil, rule: "unknown month"),
        .init(text: "0", expected: nil, rule: "a number"),
        .init(text: "", expected: nil, rule: "empty"),
        .init(text: "Thu, 18 Aug 2050 02:01:18 GMT garbage", expected: nil, rule: "trailing text"),
        .init(text: "Thursday, 18 Aug 2050 02:01:18 GMT", expected: nil, rule: "long day name in IMF-fixdate"),
        .init(text: "Ünïcödé, 18 Aug 2050 02:01:18 GMT", expected: nil, rule: "non-ASCII"),
    ]

    @Test(arguments: rows)
    func parse(_ row: Row) {
        let now = Date(timeIntervalSince1970: 1_763_700_000)
        #expect(HTTPDate.parse(row.text, now: now)?.timeIntervalSince1970 == row.expected)
    }

    @Test("two-digit years: more than 50 years ahead means the previous century")
    func twoDigitYears() {
        let in2025 = Date(timeIntervalSince1970: 1_763_700_000)
        let in1994 = Date(timeIntervalSince1970: 784_111_777)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: in2025) == in1994)
        #expect(
            HTTPDate.parse("Saturday, 06-Nov-76 08:49:37 GMT", now: in2025).map { Int($0.timeIntervalSince1970) }
                == 216_118_177)
        #expect(
            HTTPDate.parse("Saturday, 06-Nov-75 08:49:37 GMT", now: in2025).map { Int($0.timeIntervalSince1970) }
                == 3_340_255_777)
        #expect(HTTPDate.parse("Monday, 06-Nov-94 08:49:37 GMT") == in1994)
    }

    @Test(
        "format writes IMF-fixdate and round-trips",
        arguments: [0.0, 784_111_777, 2_147_483_648, 9_999_999_999, -1, 951_825_600])
    func format(_ seconds: TimeInterval) {
        let date = Date(timeIntervalSince1970: seconds)
        let text = HTTPDate.format(date)
        #expect(text.count == 29)
        #expect(HTTPDate.parse(text) == date)
    }

    @Test func formatExample() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
    }

    @Test("dates beyond years 0000 to 9999, or no number, are written as those years' ends, never a trap")
    func formatOutOfRange() {
        #expect(HTTPDate.format(Date(timeIntervalSince1970: 1e300)) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: .infinity)) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: -1e300)) == "Sat, 01 Jan 0000 00:00:00 GMT")
        let leapDayOfYearZero = HTTPDate.parse("Tue, 29 Feb 0000 12:00:00 GMT")
        #expect(leapDayOfYearZero.map(HTTPDate.format) == "Tue, 29 Feb 0000 12:00:00 GMT")
        #expect(HTTPDate.format(Date(timeIntervalSince1970: .nan)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:59 GMT") == Date(timeIntervalSince1970: 253_402_300_799))
    }
}
