/// One member of `Accept-Language` (RFC 9110 §12.5.4): a language range and its weight.
struct LanguagePreference: Sendable, Hashable {
    /// The range, lowercased (`de`, `en-gb`, `*`).
    var range: String
    /// The weight, 0…1000 (thousandths, as `qvalue` allows three decimals).
    var weight: Int

    /// `range;q=0.5` as it enters a secondary key.
    var normalized: String { weight == 1000 ? range : "\(range);q=\(weight)" }

    /// The members, most preferred first (equal weights alphabetically); a member whose `q` is
    /// not a valid weight counts as weight 1, as a server would most likely read it.
    static func parse<S: StringProtocol>(_ members: [S]) -> [LanguagePreference] {
        members.map { member in
            let parts = member.split(separator: ";").map { $0.trimmingHTTPWhitespace() }
            var weight = 1000
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingHTTPWhitespace() }
                if pair.count == 2, pair[0].lowercased() == "q", let value = Double(pair[1]), value >= 0, value <= 1 {
                    weight = Int((value * 1000).rounded())
                }
            }
            return LanguagePreference(range: String(parts.first ?? "").lowercased(), weight: weight)
        }
        .sorted { $0.weight != $1.weight ? $0.weight > $1.weight : $0.range < $1.range }
    }

    /// Whether a response in `languages` (its `Content-Language`) is what a server choosing by
    /// `preferences` would send first: one of the most preferred ranges (weight above 0)
    /// matches one of its languages (RFC 4647 basic filtering: equal, or a prefix up to a `-`).
    static func prefers(_ languages: [String], under preferences: [LanguagePreference]) -> Bool {
        guard let top = preferences.first, top.weight > 0 else { return false }
        let best = preferences.filter { $0.weight == top.weight }.map(\.range)
        return languages.contains { language in
            let tag = language.lowercased()
            return best.contains { $0 == "*" || $0 == tag || tag.hasPrefix($0 + "-") }
        }
    }
}
