extension Duration {
    /// The whole nanoseconds, for APIs that count in them (NIO's `TimeAmount`).
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
