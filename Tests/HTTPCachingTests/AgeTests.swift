import HTTPCaching
import HTTPTypes
import Testing
import WebCacheTestSupport

@Suite("Age (RFC 9111 §4.2.3, §5.1)")
struct AgeTests {
    struct ParseRow: CustomTestStringConvertible, Sendable {
        let lines: [String]
        let expected: Int?
        let rule: String
        var testDescription: String { "Age \(lines) (\(rule))" }
    }

    @Test(arguments: [
        ParseRow(lines: ["30"], expected: 30, rule: "§5.1"),
        ParseRow(lines: ["abc"], expected: nil, rule: "non-numeric is ignored"),
        ParseRow(lines: ["-7200"], expected: nil, rule: "negative is ignored"),
        ParseRow(lines: ["7200.0"], expected: nil, rule: "float is ignored"),
        ParseRow(lines: ["2147483647"], expected: 2_147_483_647, rule: "2^31 − 1"),
        ParseRow(lines: ["2147483649"], expected: 2_147_483_648, rule: "overflow caps at 2^31"),
        ParseRow(lines: ["99999999999999999999999"], expected: 2_147_483_648, rule: "huge caps at 2^31"),
        ParseRow(lines: ["7200, 0"], expected: 7200, rule: "first member of a list"),
        ParseRow(lines: ["0, 7200"], expected: 0, rule: "first member of a list"),
        ParseRow(lines: ["7200", "0"], expected: 7200, rule: "first line"),
        ParseRow(lines: ["0", "7200"], expected: 0, rule: "first line"),
        ParseRow(lines: ["7200;foo=bar"], expected: nil, rule: "parameters are not delta-seconds"),
        ParseRow(lines: [""], expected: nil, rule: "empty"),
        ParseRow(lines: [" 15 "], expected: 15, rule: "whitespace trimmed"),
    ])
    func parse(_ row: ParseRow) {
        var fields = HTTPFields()
        for line in row.lines { fields.append(HTTPField(name: .age, value: line)) }
        #expect(AgeField.parse(fields) == row.expected)
    }

    @Test("corrected initial age is the larger of apparent age and Age plus response delay")
    func correctedAge() {
        let rules = CacheRules.private
        // Date 100 s before receipt: apparent age 100. Age 30 plus 2 s delay: 32.
        let slowClock = Fixtures.stored(["Date: @-100", "Age: 30"], latency: 2)
        let a = rules.age(of: slowClock, now: Fixtures.at(10))
        #expect(a.apparentAge == 100)
        #expect(a.correctedAgeValue == 32)
        #expect(a.correctedInitialAge == 100)
        #expect(a.residentTime == 10)
        #expect(a.currentAge == 110)
        // Date in the future (fast clock): apparent age 0, Age wins.
        let fastClock = Fixtures.stored(["Date: @50", "Age: 30"], latency: 2)
        #expect(rules.age(of: fastClock, now: Fixtures.at(10)).currentAge == 42)
        // No Date: the receipt time stands in.
        #expect(rules.age(of: Fixtures.stored(["Age: 5"]), now: Fixtures.at(1)).currentAge == 6)
        // Invalid Date: likewise.
        #expect(rules.age(of: Fixtures.stored(["Date: foo"]), now: Fixtures.at(3)).currentAge == 3)
    }

    @Test("the served head carries the current Age and keeps Date")
    func servedAge() {
        let rules = CacheRules.private
        let stored = Fixtures.stored(["Date: @0", "Age: 30", "Cache-Control: max-age=100000", "Connection: close"])
        let head = rules.headForServing(stored, now: Fixtures.at(3))
        #expect(head.headerFields[.age] == "33")
        #expect(head.headerFields[.date] == Fixtures.httpDate(0))
        #expect(head.headerFields[.connection] == nil)
        let fresh = Fixtures.stored(["Date: @0"])
        #expect(rules.headForServing(fresh, now: Fixtures.at(0)).headerFields[.age] == "0")
    }

    @Test("the age changes at whole seconds from receipt, the corrected initial age included")
    func ageChanges() {
        let rules = CacheRules.private
        // Age 30 plus a 0.5 s delay: the age starts at 30.5 s and reads 30 until 0.5 s later.
        var stored = Fixtures.stored(["Date: @0", "Age: 30"])
        stored.requestTime = stored.responseTime.addingTimeInterval(-0.5)
        let facts = rules.facts(of: stored)
        let start = facts.responseTime
        #expect(facts.age(at: start) == 30)
        let first = facts.ageChanges(after: start)
        #expect(abs(first.timeIntervalSince(start) - 0.5) < 1e-6)
        #expect(facts.age(at: first.addingTimeInterval(-0.001)) == 30)
        #expect(facts.age(at: first.addingTimeInterval(0.001)) == 31)
        // Later on, a whole second after the previous change; never at or before `now`.
        let later = start.addingTimeInterval(7.2)
        let next = facts.ageChanges(after: later)
        #expect(abs(next.timeIntervalSince(start) - 7.5) < 1e-6)
        #expect(facts.age(at: later) == facts.age(at: next.addingTimeInterval(-0.001)))
        // Before receipt (a clock that went back) the age stays put until receipt and beyond.
        #expect(facts.ageChanges(after: start.addingTimeInterval(-10)) > start)
    }
}
