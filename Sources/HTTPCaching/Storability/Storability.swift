import HTTPTypes

/// Whether a response may be stored, what to store, and why (RFC 9111 §3).
public struct Storability: Sendable, Hashable, CustomStringConvertible {
    /// Whether the response may be stored.
    public var isStorable: Bool
    /// The reasons, in words: the rule that refused it, or what made it storable.
    public var reasons: [String]
    /// Fields that must be removed before storing: those named by a qualified `no-cache`, or by
    /// a qualified `private` in a shared cache (RFC 9111 §5.2.2.4, §5.2.2.7).
    public var fieldsToOmit: Set<HTTPField.Name>

    /// A refusal for `reason`.
    static func refused(_ reason: String) -> Storability {
        Storability(isStorable: false, reasons: [reason], fieldsToOmit: [])
    }

    /// The reasons joined into one sentence.
    public var description: String {
        (isStorable ? "storable: " : "not storable: ") + reasons.joined(separator: "; ")
    }
}
