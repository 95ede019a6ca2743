import HTTPTypes

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The steps of RFC 9111 §4.2.3, kept so that they can be explained.
public struct AgeCalculation: Sendable, Hashable {
    /// The `Age` field value received with the response (0 when absent or invalid).
    public var ageValue: Int
    /// `max(0, response_time − date_value)`.
    public var apparentAge: TimeInterval
    /// `age_value + (response_time − request_time)`.
    public var correctedAgeValue: TimeInterval
    /// `max(apparent_age, corrected_age_value)`.
    public var correctedInitialAge: TimeInterval
    /// `now − response_time`.
    public var residentTime: TimeInterval
    /// `corrected_initial_age + resident_time`: the age of the response now.
    public var currentAge: TimeInterval
}

/// Parsing of the `Age` field (RFC 9111 §5.1).
public enum AgeField {
    /// The value of the first `Age` line's first list member when it is a valid `delta-seconds`;
    /// `nil` for a missing, negative, fractional or otherwise malformed value, which is ignored.
    /// Values past 2^31 are capped at 2^31.
    public static func parse(_ fields: HTTPFields) -> Int? {
        guard let first = fields.first(where: { $0.name == .age })?.value else { return nil }
        let member = first.split(separator: ",", omittingEmptySubsequences: false).first ?? ""
        return DeltaSeconds.parse(member.trimmingHTTPWhitespace())
    }
}

extension CacheRules {
    /// The current age of a stored response at `now` (RFC 9111 §4.2.3).
    public func age(of stored: StoredResponse, now: Date) -> AgeCalculation {
        let ageValue = AgeField.parse(stored.response.headerFields) ?? 0
        let apparentAge = max(0, stored.responseTime.timeIntervalSince(dateValue(of: stored)))
        let responseDelay = max(0, stored.responseTime.timeIntervalSince(stored.requestTime))
        let correctedAgeValue = Double(ageValue) + responseDelay
        let correctedInitialAge = max(apparentAge, correctedAgeValue)
        let residentTime = max(0, now.timeIntervalSince(stored.responseTime))
        return AgeCalculation(
            ageValue: ageValue, apparentAge: apparentAge, correctedAgeValue: correctedAgeValue,
            correctedInitialAge: correctedInitialAge, residentTime: residentTime,
            currentAge: correctedInitialAge + residentTime)
    }
}
