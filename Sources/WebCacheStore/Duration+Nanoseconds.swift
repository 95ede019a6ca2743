extension Duration {
    /// The whole nanoseconds, for APIs that count in them (NIO's `TimeAmount`); a duration past
    /// what 64 bits of nanoseconds hold (292 years: `--idle-timeout 10000000000`) counts as the
    /// most they hold, either way, instead of trapping.
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return seconds < 0 ? .min : .max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        guard !overflowAgain else { return seconds < 0 ? .min : .max }
        return total
    }
}
