/// One directive of a `Cache-Control` (or targeted) field: a lower-cased name and an optional
/// argument.
///
/// RFC 9111 §5.2: `cache-directive = token [ "=" ( token / quoted-string ) ]`. The argument is
/// stored unquoted; ``isWellFormed`` is false when the name or the argument breaks that grammar
/// (e.g. `max-age =3600`, `max-age='3600'` with its single quotes is well formed but not a number).
public struct CacheDirective: Sendable, Hashable, CustomStringConvertible {
    /// The directive name, lower-cased (directive names are case-insensitive, RFC 9111 §5.2).
    public var name: String
    /// The argument with quotes and escapes removed, or `nil` when the directive has none.
    public var argument: String?
    /// Whether the argument was written as a quoted-string.
    public var isQuoted: Bool
    /// Whether the directive follows the RFC 9111 §5.2 grammar.
    public var isWellFormed: Bool

    /// Creates a directive.
    public init(name: String, argument: String? = nil, isQuoted: Bool = false, isWellFormed: Bool = true) {
        self.name = name.lowercased()
        self.argument = argument
        self.isQuoted = isQuoted
        self.isWellFormed = isWellFormed
    }

    /// The directive as it would be written in a field value.
    public var description: String {
        guard let argument else { return name }
        if isQuoted || !argument.allSatisfy(\.isHTTPTokenCharacter) || argument.isEmpty {
            var escaped = ""
            for character in argument {
                if character == "\\" || character == "\"" { escaped.append("\\") }
                escaped.append(character)
            }
            return "\(name)=\"\(escaped)\""
        }
        return "\(name)=\(argument)"
    }

    /// The argument read as `delta-seconds` (RFC 9111 §1.2.2), or `nil` when it is missing or not
    /// a non-negative integer. Values beyond 2^31 are capped at 2^31 as §1.2.2 requires.
    public var deltaSeconds: Int? {
        guard let argument else { return nil }
        return DeltaSeconds.parse(argument)
    }
}

/// Parsing of RFC 9111 §1.2.2 `delta-seconds`.
enum DeltaSeconds {
    /// RFC 9111 §1.2.2: a value that overflows is treated as 2^31.
    static let maximum = 2_147_483_648

    /// Digits only, leading zeros allowed, capped at ``maximum``.
    static func parse<S: StringProtocol>(_ text: S) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            if value < maximum {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
        }
        return min(value, maximum)
    }
}

extension Character {
    /// RFC 9110 §5.6.2 `tchar`.
    var isHTTPTokenCharacter: Bool {
        guard let ascii = asciiValue else { return false }
        switch ascii {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(ascii)
        }
    }
}
